#include "profiler/communication.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "core/base/checked.h"
#include "core/base/strings.h"
#include "profiler/intervals.h"
#include "profiler/recording.h"

namespace fusebox::profiler {

using exec::DeviceActivity;

namespace {

bool has(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}
int64_t dur(const DeviceActivity& a) {
  return std::max<int64_t>(0, a.end_ns - a.start_ns);
}

}  // namespace

std::string kernel_function_name(const std::string& kernel) {
  size_t end = kernel.size();
  // The argument list and template arguments come after the name; "(anonymous namespace)::f"
  // and "operator()" aside, the first '(' or '<' ends it.
  for (size_t i = 0; i < kernel.size(); ++i)
    if ((kernel[i] == '(' && kernel.compare(i, 21, "(anonymous namespace)") != 0) ||
        kernel[i] == '<') {
      end = i;
      break;
    }
  std::string head = kernel.substr(0, end);
  const size_t space = head.find_last_of(' ');
  return space == std::string::npos ? head : head.substr(space + 1);
}

namespace {

bool communication_name(const std::string& kernel) {
  const std::string f = to_lower(kernel_function_name(kernel));
  static const char* const parts[] = {"nccl",           "rccl",          "multimem_",
                                      "all_reduce",     "allreduce",     "all_gather",
                                      "allgather",      "reduce_scatter", "reducescatter",
                                      "all_to_all",     "alltoall",      "cross_device_reduce"};
  for (const char* p : parts)
    if (has(f, p)) return true;
  return false;
}

}  // namespace

bool is_communication_kernel(const Name& kernel) {
  thread_local NameMemo<bool> memo(&communication_name);
  return memo(kernel);
}

std::string collective_of(const std::string& kernel) {
  const std::string f = to_lower(kernel_function_name(kernel));
  if (has(f, "allreduce") || has(f, "all_reduce") || has(f, "cross_device_reduce"))
    return "allreduce";
  if (has(f, "allgather") || has(f, "all_gather")) return "allgather";
  if (has(f, "reducescatter") || has(f, "reduce_scatter")) return "reducescatter";
  if (has(f, "alltoall") || has(f, "all_to_all")) return "alltoall";
  if (has(f, "broadcast")) return "broadcast";
  if (has(f, "sendrecv") || has(f, "_send") || has(f, "_recv")) return "sendrecv";
  if (has(f, "reduce")) return "reduce";
  return "other";
}

namespace {
// The '_'-separated fields of a NCCL kernel's function name.
std::vector<std::string> fields(const std::string& kernel) {
  std::vector<std::string> out;
  const std::string f = kernel_function_name(kernel);
  size_t pos = 0;
  while (pos <= f.size()) {
    const size_t us = f.find('_', pos);
    out.push_back(f.substr(pos, us == std::string::npos ? std::string::npos : us - pos));
    if (us == std::string::npos) break;
    pos = us + 1;
  }
  return out;
}
}  // namespace

std::string nccl_algorithm(const std::string& kernel) {
  if (!has(to_lower(kernel_function_name(kernel)), "ccl")) return "";
  static const char* const algos[] = {"RING", "TREE", "NVLS", "NVLSTREE", "COLLNET",
                                      "COLLNETDIRECT", "COLLNETCHAIN", "PAT"};
  for (const std::string& w : fields(kernel))
    for (const char* a : algos)
      if (w == a) return w;
  return "";
}

std::string nccl_protocol(const std::string& kernel) {
  if (!has(to_lower(kernel_function_name(kernel)), "ccl")) return "";
  for (const std::string& w : fields(kernel))
    if (w == "LL" || w == "LL128" || w == "SIMPLE") return w;
  return "";
}

int dtype_bytes(const std::string& dtype) {
  static const std::map<std::string, int> sizes = {
      {"float", 4},    {"float32", 4},  {"int", 4},      {"int32", 4},     {"uint32", 4},
      {"double", 8},   {"float64", 8},  {"long", 8},     {"int64", 8},     {"uint64", 8},
      {"half", 2},     {"float16", 2},  {"bfloat16", 2}, {"short", 2},     {"int16", 2},
      {"byte", 1},     {"char", 1},     {"int8", 1},     {"uint8", 1},     {"bool", 1},
      {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"float8_e4m3fnuz", 1}, {"float8_e5m2fnuz", 1}};
  const auto it = sizes.find(to_lower(dtype));
  return it == sizes.end() ? 0 : it->second;
}

double busbw_factor(const std::string& c, int64_t n) {
  if (n < 1) return 0;
  const double nn = static_cast<double>(n);
  if (c == "allreduce") return 2 * (nn - 1) / nn;
  if (c == "allgather" || c == "reducescatter" || c == "alltoall") return (nn - 1) / nn;
  return 1;
}

CommSplit comm_split(const std::vector<const DeviceActivity*>& kernels) {
  CommSplit s;
  Intervals comm, compute;
  for (const DeviceActivity* k : kernels) {
    if (is_communication_kernel(k->name)) {
      s.kernel_count += 1;
      s.kernel_ns += dur(*k);
      comm.push_back({k->start_ns, k->end_ns});
    } else {
      compute.push_back({k->start_ns, k->end_ns});
    }
  }
  const Intervals uc = merged(std::move(comm)), up = merged(std::move(compute));
  s.busy_ns = length(uc);
  s.compute_busy_ns = length(up);
  s.overlap_ns = intersection(uc, up);
  s.exposed_ns = s.busy_ns - s.overlap_ns;
  return s;
}

namespace {

// The collective a group is filed under: the trace's name where it gives one ("all_reduce",
// "allreduce" and "AllReduce" are one), else the kernel name's.
std::string collective_key(const DeviceActivity& k, const CollectiveArgs* a) {
  if (a && !a->collective.empty()) {
    std::string c = to_lower(a->collective);
    c.erase(std::remove(c.begin(), c.end(), '_'), c.end());
    if (c == "send" || c == "recv" || c == "sendrecv") return "sendrecv";
    if (c == "reducescatterbase" || c == "reducescattertensorcoalesced") return "reducescatter";
    if (c == "allgatherbase" || c == "allgatherintotensorcoalesced") return "allgather";
    if (c == "alltoallbase" || c == "alltoallv") return "alltoall";
    return c;
  }
  return collective_of(k.name);
}

// A message larger than any GPU's memory (256 TiB) is a corrupt record, not a size: unsized.
constexpr uint64_t kMaxCollectiveBytes = uint64_t{1} << 48;

// S, NCCL's collective size in bytes, or 0 when the arguments do not give it (or give one no
// message can have).
uint64_t collective_bytes(const std::string& collective, const CollectiveArgs& a) {
  const int b = dtype_bytes(a.dtype);
  const int64_t n = collective == "allgather" ? a.out_nelems : a.in_nelems;
  if (b <= 0 || n <= 0) return 0;
  const auto bytes = checked_mul(static_cast<uint64_t>(n), static_cast<uint64_t>(b));
  return bytes && *bytes <= kMaxCollectiveBytes ? *bytes : 0;
}

}  // namespace

std::vector<CommGroup> comm_groups(const std::vector<const DeviceActivity*>& kernels,
                                   const std::vector<const CollectiveArgs*>& args) {
  std::map<std::string, CommGroup> by;
  std::map<std::string, std::string> algo;  // collective -> algorithm/protocol, "*" when mixed
  for (size_t i = 0; i < kernels.size(); ++i) {
    const DeviceActivity& k = *kernels[i];
    const CollectiveArgs* a = i < args.size() ? args[i] : nullptr;
    const std::string c = collective_key(k, a);
    CommGroup& g = by[c];
    g.collective = c;
    g.count += 1;
    g.total_ns += dur(k);
    std::string al = nccl_algorithm(k.name);
    const std::string pr = nccl_protocol(k.name);
    if (!pr.empty()) al += (al.empty() ? "" : "/") + pr;
    auto [it, fresh] = algo.try_emplace(c, al);
    if (!fresh && it->second != al) it->second = "*";
    if (!a) continue;
    const uint64_t bytes = collective_bytes(c, *a);
    if (bytes == 0 || a->group_size < 1) continue;
    g.bytes = saturating_add(g.bytes, bytes);
    g.sized_ns += dur(k);
    g.sized += 1;
    g.group_size = std::max(g.group_size, a->group_size);
  }
  std::vector<CommGroup> out;
  for (auto& [c, g] : by) {
    g.algorithm = algo[c] == "*" ? "" : algo[c];
    if (g.sized_ns > 0) {
      g.algbw_gbs = static_cast<double>(g.bytes) / static_cast<double>(g.sized_ns);
      g.busbw_gbs = g.algbw_gbs * busbw_factor(c, g.group_size);
    }
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const CommGroup& x, const CommGroup& y) {
    return x.total_ns > y.total_ns;
  });
  return out;
}

}  // namespace fusebox::profiler
