#pragma once
// Communication on the GPU: which kernels are collectives, what they moved, how fast, and how
// much of their time the computation hid. Read by the GPU analysis (per device) and the rank
// analysis (per rank and step). Times are nanoseconds.
//
// Definitions:
//  - A communication kernel is one whose function name (the text before the first '(' or '<',
//    after the last space: "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "multimem_all_reduce_kernel",
//    "vllm::cross_device_reduce_1stage") contains, case-insensitively, "nccl" or "rccl" (NCCL's
//    and RCCL's kernels, `ncclKernel_*` / `ncclDevKernel_*`), "multimem_" (NVLink SHARP
//    collectives, PyTorch's symmetric-memory all-reduce), "all_reduce"/"allreduce",
//    "all_gather"/"allgather", "reduce_scatter"/"reducescatter", "all_to_all"/"alltoall", or
//    "cross_device_reduce" (vLLM's custom all-reduce). Matching the function name and not the
//    whole signature keeps a template argument such as `BlockAllReduce` in a softmax kernel's
//    signature from making it communication. Every other kernel is computation.
//  - Its collective is kineto's "Collective name" argument where the trace has it (PyTorch
//    2.1 on records it with "In msg nelems", "Out msg nelems", "Group size" and "dtype"), else
//    the name: allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv (NCCL's
//    Send/Recv/SendRecv), else "other". The algorithm and protocol are NCCL's kernel-name fields
//    (RING, TREE, NVLS, COLLNET..., and LL, LL128, SIMPLE) where the name has them.
//  - Bandwidth, as NCCL defines it (NCCL's doc/PERFORMANCE.md, "bus bandwidth"):
//    algbw = S / t, with S the collective's size in bytes (allreduce, reducescatter, reduce:
//    the input; allgather: the output; the others: the input) and t the kernel's duration;
//    busbw = algbw * factor, factor 2(n-1)/n for allreduce, (n-1)/n for allgather,
//    reducescatter and alltoall, 1 for broadcast, reduce and sendrecv, n the group size. Both
//    only where the trace gives the sizes and the group; reported per collective as sum(S) /
//    sum(t) over its kernels.
//  - Overlap, as HTA defines it (HolisticTraceAnalysis, "Communication computation overlap"):
//    per device, the time communication kernels run while computation kernels run, over the
//    communication time: overlap = |U(comm) ∩ U(compute)|, with U the union of the kernels'
//    intervals over all streams, and overlap fraction = overlap / |U(comm)|. Exposed
//    communication = |U(comm)| - overlap: the time the device only communicated, which a
//    faster network or better overlap would give back.
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/device_activity.h"
#include "core/base/name.h"

namespace fusebox::profiler {

struct CollectiveArgs;

// The function name of a (demangled) kernel name: "void ns::f<T>(int)" -> "ns::f".
std::string kernel_function_name(const std::string& kernel);
// Worked out once per distinct name and thread: analyses ask it of every kernel record.
bool is_communication_kernel(const Name& kernel);
// "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv",
// "other" (from the name alone).
std::string collective_of(const std::string& kernel);
// NCCL's algorithm and protocol fields of its kernel names ("RING", "LL"); "" when absent.
std::string nccl_algorithm(const std::string& kernel);
std::string nccl_protocol(const std::string& kernel);
// Bytes of one element of kineto's dtype names ("Float" 4, "BFloat16" 2, "Byte" 1...); 0 unknown.
int dtype_bytes(const std::string& dtype);
// NCCL's bus bandwidth factor for a collective over n ranks (0 when n < 1).
double busbw_factor(const std::string& collective, int64_t n);

// Communication of a set of kernels (one device, or one rank's step).
struct CommGroup {
  std::string collective;  // "allreduce"...
  std::string algorithm;   // "RING/LL" when every kernel of the group names the same, else ""
  int64_t count = 0;
  int64_t total_ns = 0;
  uint64_t bytes = 0;      // sum of S over the kernels that have sizes
  int64_t sized_ns = 0;    // their time
  int64_t sized = 0;       // how many have sizes and a group size
  int64_t group_size = 0;  // the largest group seen
  double algbw_gbs = 0, busbw_gbs = 0;  // bytes per ns = GB/s; 0 when none has sizes
};

struct CommSplit {
  int64_t kernel_count = 0;  // communication kernels
  int64_t kernel_ns = 0;     // sum of their durations
  int64_t busy_ns = 0;       // |U(comm)|
  int64_t compute_busy_ns = 0;  // |U(compute)|
  int64_t overlap_ns = 0;    // |U(comm) ∩ U(compute)|
  int64_t exposed_ns = 0;    // busy - overlap
  double overlap_fraction() const {
    return busy_ns > 0 ? static_cast<double>(overlap_ns) / static_cast<double>(busy_ns) : 0;
  }
};

// The split of a device's kernels (any order). `kernels` are Kernel records only.
CommSplit comm_split(const std::vector<const exec::DeviceActivity*>& kernels);

// Groups by collective (most time first); args[i] is the trace's collective arguments of
// comm_kernels[i], nullptr where it has none (args.size() == comm_kernels.size()).
std::vector<CommGroup> comm_groups(const std::vector<const exec::DeviceActivity*>& comm_kernels,
                                   const std::vector<const CollectiveArgs*>& args);

}  // namespace fusebox::profiler
