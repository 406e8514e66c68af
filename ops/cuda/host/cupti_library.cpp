#include "ops/cuda/host/cupti_library.h"

#include <algorithm>

namespace fusebox::cuda {
namespace {

std::string parent(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : dir.substr(0, slash);
}

std::string join(const std::string& dir, const std::string& rest) {
  if (dir.empty()) return rest;
  return dir.back() == '/' ? dir + rest : dir + "/" + rest;
}

}  // namespace

std::string cupti_soname(int cudart_version) { return "libcupti.so." + std::to_string(cudart_version / 1000); }

std::vector<std::string> cupti_library_candidates(const std::string& soname, const std::string& blas_dir,
                                                  const std::string& cuda_home) {
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  add(soname);
  if (!blas_dir.empty()) {
    add(join(blas_dir, soname));
    // <toolkit>/lib64 -> <toolkit>/extras/CUPTI/lib64; <toolkit>/targets/<arch>/lib -> the same.
    const std::string up1 = parent(blas_dir);
    if (!up1.empty()) add(join(up1, "extras/CUPTI/lib64/" + soname));
    const std::string up3 = parent(parent(up1));
    if (!up3.empty() && parent(blas_dir).find("/targets/") != std::string::npos)
      add(join(up3, "extras/CUPTI/lib64/" + soname));
  }
  for (const std::string& home : {cuda_home, std::string("/usr/local/cuda")}) {
    if (home.empty()) continue;
    add(join(home, "extras/CUPTI/lib64/" + soname));
    add(join(home, "lib64/" + soname));
  }
  return out;
}

}  // namespace fusebox::cuda
