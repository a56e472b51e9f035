// Wrapper module that exists only to build the etcd server used by the end-to-end tests.
// go.etcd.io/etcd/server/v3 carries replace directives, so `go install ...@version` is refused.
module disttrain.io/tools/etcd

go 1.25.0

require go.etcd.io/etcd/server/v3 v3.6.10
