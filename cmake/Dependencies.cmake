# Every third-party dependency comes from a Debian package (scripts/install-deps.sh installs them);
# nothing is fetched from the network at configure time.
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(cpprestsdk CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
# Debian's protobuf ships no CMake config; CMake's FindProtobuf module finds it.
find_package(Protobuf REQUIRED)
# Debian's gRPC targets are imported for configuration "None": use $<TARGET_FILE:...>, never
# IMPORTED_LOCATION_RELEASE, to reach grpc_cpp_plugin.
find_package(gRPC CONFIG REQUIRED)
if(DISTTRAIN_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
