# CUDA is optional. The build succeeds without nvcc; with DISTTRAIN_ENABLE_CUDA=ON and a CUDA
# compiler on the machine, the trainer's CUDA kernels are compiled and linked in as well.
set(DISTTRAIN_HAVE_CUDA OFF)
if(DISTTRAIN_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    # The runtime, linked statically so the binaries need only the driver on a GPU machine.
    # Found by hand: CMake 3.25's FindCUDAToolkit fails on CUDA 13 (no nvToolsExt any more).
    find_library(DISTTRAIN_CUDART_STATIC NAMES cudart_static REQUIRED
      HINTS ${CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES} ${CUDAToolkit_ROOT}/lib64 ${CUDAToolkit_ROOT}/lib)
    add_library(disttrain_cudart INTERFACE)
    target_link_libraries(disttrain_cudart INTERFACE ${DISTTRAIN_CUDART_STATIC} dl rt Threads::Threads)
    # cuBLAS, shared: its static archive is not in the wheels and the library (with cublasLt,
    # 0.6 GB) is installed on GPU machines anyway. Linked by soname, which the wheels ship alone.
    find_library(DISTTRAIN_CUBLAS NAMES cublas libcublas.so.13 REQUIRED
      HINTS ${CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES} ${CUDAToolkit_ROOT}/lib64 ${CUDAToolkit_ROOT}/lib)
    add_library(disttrain_cublas INTERFACE)
    target_link_libraries(disttrain_cublas INTERFACE ${DISTTRAIN_CUBLAS} disttrain_cudart)
    set(DISTTRAIN_HAVE_CUDA ON)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    # CMake 3.25 does not know nvcc 13's C++20 flag: tell it (nvcc has it since CUDA 12).
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA_STANDARD 20)
    # nvcc's front end warns (#2810) on every `status = Call();`: absl::Status is [[nodiscard]]
    # and it takes the discarded `Status&` of operator= for a discarded Status.
    string(APPEND CMAKE_CUDA_FLAGS " -diag-suppress 2810")
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  endif()
endif()
message(STATUS "disttrain: CUDA kernels ${DISTTRAIN_HAVE_CUDA}")
