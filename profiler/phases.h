#pragma once
// LLM serving phases: a serving or generate trace split into its prefill, decode and mixed
// steps, from the annotations the engines write. Per phase: steps, their host time, the GPU
// time they launched, the kernels holding it, the KV-cache writes, and tokens per second where
// the annotations count tokens. Times are nanoseconds.
//
// Definitions (a step is a host range; its GPU work is what it launched, steps.h):
//  - Engine annotations, in this order of precedence (a step is the outermost range matching
//    the first rule that matches any; ranges inside a step are part of it):
//      1. vLLM's and SGLang's per-forward annotation
//         "execute_<tokens>_context_<P>(...)_generation_<D>(...)": P requests in prefill
//         (context) and D in decode (generation): prefill when D = 0, decode when P = 0, mixed
//         (chunked prefill riding with decodes) when both; <tokens> scheduled tokens.
//      2. SGLang's "step[<MODE> bs=<B> toks=<T>]": EXTEND or PREFILL -> prefill, DECODE ->
//         decode, MIXED -> mixed, IDLE -> idle; T tokens.
//      3. a range named "prefill..." or "decode..." (any case; a user's own annotation), its
//         tokens counted where the name says "toks=<T>" as SGLang's step ranges do (fusebox
//         generate's ranges: "prefill toks=16", "decode toks=1").
//      4. Hugging Face generate: each top-level forward of a causal LM (PyTorch's module range
//         "nn.Module: <Name>ForCausalLM_<n>", recorded with with_modules) inside a call of
//         generate (the Python range "...: generate", recorded with with_stack) is a step; by
//         generate's contract the first runs over the prompt (prefill), each later one makes
//         one token (decode, 1 token a step). A forward outside generate (a serving engine's,
//         a graph capture's) is no step.
//    With none, there are no phases, and the report says so: splitting on kernel names (flash
//    prefill vs decode variants) is engine- and version-specific and is not guessed at.
//  - KV-cache writes: kernels whose function name (communication.h) contains
//    "reshape_and_cache" (vLLM), "store_kvcache" or "set_kv_buffer" (SGLang), "kv_cache" or
//    "copy_blocks".
//  - A step's time runs from its host range's start to the later of the range's end and the
//    end of the GPU work it launched (the host queues ahead: a step's kernels can finish long
//    after its range closes; the clocks are first aligned, clock_skew.h).
//  - Tokens per second: a phase's tokens over its steps' time, where every step of the phase
//    gives its token count.
//  - A phase's kernels: those its steps launched, grouped by name, most time first (the text
//    prints the first 3; `--json` lists them all under the phase's "kernels").
//  - A recording with no GPU work (fusebox's own, on the CPU backend: `fusebox generate --out`)
//    has its steps' work in its op spans: a step's work is then the op spans that start inside
//    its range (their kernels ran on the CPU), the "kernel" figures count those ops, and its
//    KV-cache writes are the ops whose node writes a present the next step reads
//    (NodeInfo::kv_cache_write, which fusebox generate sets). A CPU recording that marks none
//    does not tell them apart (`Phases::kv_writes_told` false, the text's "-"). `Phases::work`
//    says which.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/recording.h"

namespace fusebox::profiler {

struct PhaseKernel {
  std::string name;
  int64_t count = 0, total_ns = 0;
};

struct Phase {
  std::string name;  // "prefill", "decode", "mixed", "idle"
  int64_t steps = 0;
  int64_t host_ns = 0;      // sum of the steps' host ranges
  int64_t step_ns = 0;      // sum of the steps' times (to their GPU work's end)
  int64_t kernel_count = 0, kernel_ns = 0;  // kernels the steps launched (CPU: their ops)
  int64_t kv_write_count = 0, kv_write_ns = 0;
  int64_t tokens = -1;      // -1: not every step says
  double tokens_per_s = 0;  // 0 when tokens < 0
  std::vector<PhaseKernel> kernels;  // by name (CPU: by op), most time first: the phase's op table
};

struct PhaseStep {
  std::string phase;
  std::string annotation;  // the range's name
  int64_t start_ns = 0, end_ns = 0;
  int64_t tokens = -1;
  int64_t gpu_end_ns = 0;  // end of the GPU work it launched (its start when none)
};

struct Phases {
  std::string rule;  // which rule decided ("vLLM/SGLang execute_ annotation", ...; "none")
  std::string work = "gpu";      // "gpu": the kernels the steps launched; "cpu": their op spans
  bool kv_writes_told = true;    // "cpu": false when no node is marked as writing the KV cache
  std::vector<PhaseStep> steps;  // in time order
  std::vector<Phase> phases;     // prefill, decode, mixed, idle: those present
};

Phases analyze_phases(const Recording& r);
std::string phases_text(const Phases& p);
nlohmann::json phases_json(const Phases& p);

}  // namespace fusebox::profiler
