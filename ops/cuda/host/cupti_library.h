#pragma once
// Where to look for CUPTI, which the CUDA plugin loads only when it is asked to trace (dlopen), so
// that a machine whose CUPTI lives only under the toolkit's extras/CUPTI still gets the backend
// and is told tracing is unavailable. Plain logic, tested in tests/cuda/cupti_library_test.cpp.
#include <string>
#include <vector>

namespace fusebox::cuda {

// The paths to try, in order: the bare soname (the loader's search: LD_LIBRARY_PATH, the plugin's
// RUNPATH, ld.so.cache), then beside cuBLAS (`blas_dir`, where the process found libcublas) and in
// that toolkit's extras/CUPTI/lib64 (for both lib64/ and targets/<arch>/lib/ layouts), then under
// `cuda_home` ($CUDA_HOME or $CUDA_PATH) and /usr/local/cuda. Empty inputs are skipped;
// duplicates are dropped.
std::vector<std::string> cupti_library_candidates(const std::string& soname, const std::string& blas_dir,
                                                  const std::string& cuda_home);

// "libcupti.so.13" for CUDA 13.x (CUDART_VERSION 13000 and up).
std::string cupti_soname(int cudart_version);

}  // namespace fusebox::cuda
