// Which job a watch event concerns, and how urgently: the informers' handlers that feed the
// job work queue.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_JOB_EVENTS_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_JOB_EVENTS_H_

#include <string>

#include "absl/time/time.h"
#include "operator/runtime/informer.h"
#include "operator/runtime/work_queue.h"

namespace disttrain::controller {

// "namespace/job" of a pod or service the operator made (its job-name label); "" otherwise.
std::string OwnerKey(const runtime::ObjectPtr& obj);

// Whether a job's new version differs from the old only in its status (and resourceVersion,
// managedFields): what the operator's own status write brings back through the watch. The same
// resourceVersion (a relist re-delivering the job) is not such a change.
bool StatusOnlyChange(const runtime::ObjectPtr& old_job, const runtime::ObjectPtr& new_job);

// Jobs enqueue themselves, except for a status-only change: the pass that wrote that status
// already did what it called for (a pass that failed, e.g. on a 409 Conflict, is retried with
// backoff by the work queue), so a pass per status write would only re-read the same state.
// controller-runtime's GenerationChangedPredicate does the same, but here labels, annotations,
// finalizers and a deletion still count.
runtime::EventHandler EnqueueJobs(runtime::WorkQueue* queue);

// Services enqueue their job.
runtime::EventHandler EnqueueServiceOwners(runtime::WorkQueue* queue);

// Kueue's Workloads enqueue their job (its job-name label) when Kueue changes them (admission,
// eviction, the reason a job waits: queueing::DecisionChanged, so not the operator's own
// PodsReady and reclaimablePods) or they are deleted. Not when they appear: the operator
// created them in a pass that already did what their creation calls for, and a restarted
// operator's first passes come from the job informer.
runtime::EventHandler EnqueueWorkloadOwners(runtime::WorkQueue* queue);

// Namespaces (of a selector's informer: --tfjob-namespace-selector) enqueue every job of theirs in
// `jobs` when they appear or change (a label that adds or removes them from the selection), so
// a namespace taken over starts its jobs' passes and one handed back stops them.
runtime::EventHandler EnqueueNamespaceJobs(runtime::WorkQueue* queue, const runtime::Store* jobs);

// Pods enqueue their job:
// - a pod that has just exited (a chief that finished, a replica that failed) puts its job at the
//   head of the queue, since acting on it releases pods and their GPUs and must not wait behind a
//   backlog of jobs being created;
// - a deleted pod queues its job at once (a replacement may be due);
// - any other change (created, scheduled, running, ready) queues the job `batch` after the first
//   such change, so the changes of a job's pods that start together are reconciled in one or two
//   passes, each writing the status once, instead of one pass per pod (Kubernetes' Job controller
//   batches the same way, by 1 s). Zero queues at once.
runtime::EventHandler EnqueuePodOwners(runtime::WorkQueue* queue,
                                       absl::Duration batch = absl::ZeroDuration());

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_JOB_EVENTS_H_
