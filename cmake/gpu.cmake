# GPU backend selection (GFLOW_GPU):
#   OFF   runner/backend_gpu.c builds to a gf_backend_gpu_create that reports
#         "gflow was built without GPU support"; kernels have no launch_gpu.
#   CUDA  NVIDIA through runner/gf_hip.h: kernels/*.hip compiled by nvcc as
#         CUDA, the HIP names mapped onto the CUDA runtime (static cudart).
#   HIP   AMD through Debian's hipcc (kernels) and /usr/include/hip (C code).
# Kernels are built without floating-point contraction so that the GPU gives
# the CPU loop's bits (kernels/wave2d.hip says why).
file(GLOB GFLOW_GPU_KERNELS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.hip)

if(GFLOW_GPU STREQUAL "OFF")
  return()
elseif(GFLOW_GPU STREQUAL "CUDA")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "GPU architectures (90: H100/H200)")
  endif()
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set_source_files_properties(${GFLOW_GPU_KERNELS} PROPERTIES LANGUAGE CUDA)
  target_sources(gflow_core PRIVATE ${GFLOW_GPU_KERNELS})
  # CMakeLists.txt's add_compile_options (-Wall -Wextra, the sanitizers)
  # reached gflow_core before this file; nvcc rejects them: C sources only.
  get_target_property(gflow_core_options gflow_core COMPILE_OPTIONS)
  if(gflow_core_options)
    set(gflow_core_options_c "")
    foreach(option IN LISTS gflow_core_options)
      if(option MATCHES "^-D")
        list(APPEND gflow_core_options_c "${option}")
      else()
        list(APPEND gflow_core_options_c "$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:${option}>")
      endif()
    endforeach()
    set_target_properties(gflow_core PROPERTIES COMPILE_OPTIONS "${gflow_core_options_c}")
  endif()
  # LANGUAGE CUDA makes CMake call nvcc with -x cu (a .hip file would
  # otherwise be taken for C++). --fmad=false: no contraction.
  target_compile_options(gflow_core PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:--fmad=false;-Xcompiler=-Wall,-Wextra>")
  target_compile_definitions(gflow_core PUBLIC GFLOW_HIP_ON_CUDA GFLOW_WITH_GPU)
  target_include_directories(gflow_core PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(gflow_core PUBLIC CUDA::cudart_static)
  # gflow_core was created before CUDA was enabled: give it the architectures.
  set_target_properties(gflow_core PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
                                              CUDA_RUNTIME_LIBRARY Static)
elseif(GFLOW_GPU STREQUAL "HIP")
  set(GFLOW_HIP_ARCH "gfx90a" CACHE STRING "AMD GPU architectures for hipcc --offload-arch (comma-separated)")
  find_program(GFLOW_HIPCC hipcc REQUIRED)
  find_library(GFLOW_AMDHIP64 amdhip64 REQUIRED)
  find_path(GFLOW_HIP_INCLUDE hip/hip_runtime_api.h PATHS /usr/include /opt/rocm/include REQUIRED)
  # Debian's HIP has no CMake HIP-language support: hipcc as a custom command,
  # its objects linked into gflow_core.
  string(REPLACE "," ";" gflow_hip_arch_list "${GFLOW_HIP_ARCH}")
  set(gflow_hip_arch_flags "")
  foreach(arch IN LISTS gflow_hip_arch_list)
    list(APPEND gflow_hip_arch_flags --offload-arch=${arch})
  endforeach()
  file(GLOB gflow_kernel_headers ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.h
       ${CMAKE_CURRENT_SOURCE_DIR}/runner/gflow.h ${CMAKE_CURRENT_SOURCE_DIR}/runner/gf_hip.h)
  set(gflow_hip_objects "")
  foreach(source IN LISTS GFLOW_GPU_KERNELS)
    get_filename_component(name ${source} NAME_WE)
    set(object ${CMAKE_CURRENT_BINARY_DIR}/hip/${name}.o)
    add_custom_command(
      OUTPUT ${object}
      # HCC_AMDGPU_TARGET keeps hipcc from probing for a GPU (rocm_agent_enumerator).
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/hip
      COMMAND ${CMAKE_COMMAND} -E env HCC_AMDGPU_TARGET=${GFLOW_HIP_ARCH}
              ${GFLOW_HIPCC} ${gflow_hip_arch_flags} -O3 -fPIC -ffp-contract=off -Wall -Wextra
              -DGFLOW_WITH_GPU -I${CMAKE_CURRENT_SOURCE_DIR}/runner
              -I${CMAKE_CURRENT_SOURCE_DIR}/kernels -c ${source} -o ${object}
      DEPENDS ${source} ${gflow_kernel_headers}
      COMMENT "hipcc ${name}.hip for ${GFLOW_HIP_ARCH}"
      VERBATIM)
    list(APPEND gflow_hip_objects ${object})
  endforeach()
  set_source_files_properties(${gflow_hip_objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  target_sources(gflow_core PRIVATE ${gflow_hip_objects})
  target_compile_definitions(gflow_core PUBLIC GFLOW_WITH_GPU __HIP_PLATFORM_AMD__)
  target_include_directories(gflow_core PUBLIC ${GFLOW_HIP_INCLUDE})
  # hipcc's objects carry C++ (kernel registration): libstdc++ with amdhip64.
  target_link_libraries(gflow_core PUBLIC ${GFLOW_AMDHIP64} stdc++)
else()
  message(FATAL_ERROR "GFLOW_GPU must be OFF, CUDA or HIP, not '${GFLOW_GPU}'")
endif()
