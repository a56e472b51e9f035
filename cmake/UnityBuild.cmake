# Compiles each target's sources in batches of eight per translation unit (CMake's unity build).
# Most of a file's compile time here is the headers every file includes (gRPC, Protobuf,
# nlohmann/json, GoogleTest, Abseil) and the templates they instantiate; a batch parses and
# instantiates them once. Measured on 2 cores with ccache off: the dev tree took 24 min 8 s of
# CPU file by file and 7 min 19 s in batches (docs/development.md). Every tree of `make test`
# (dev, asan, tsan, thread-safety, cuda) and the images' release build compile this way.
#
# The cost: the files of a batch share one translation unit, so two helpers of the same name in
# anonymous namespaces of two files collide; name helpers after what they do in their file.
# DISTTRAIN_UNITY_BUILD=OFF compiles file by file (a faster edit-compile loop on one file).
option(DISTTRAIN_UNITY_BUILD "Compile sources in batches (CMake's unity build)" ON)
if(DISTTRAIN_UNITY_BUILD AND NOT DEFINED CMAKE_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
endif()
