#pragma once
// C++ symbol names as tools show them: demangled ("void gemm<float>(float const*, float*, int)")
// and shortened the way Nsight Systems lists kernels ("gemm").
#include <string>

namespace fusebox {

// The demangled name, or `name` itself when it is not a mangled C++ name.
std::string demangle(const std::string& name);
// The short name as nsys shows it: the (demangled) name without return type, enclosing scopes,
// template arguments and parameters ("gemm"). A plain identifier comes back as it is.
std::string kernel_short_name(const std::string& name);

}  // namespace fusebox
