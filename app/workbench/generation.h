#pragma once
// Greedy generation with a KV cache, over a decoder export whose cache is inputs and outputs
// (Hugging Face Optimum's "decoder with past"): a prefill over the prompt, then one decode step per
// token, each step's present fed back as the next step's past.
//
//   find_kv_mapping (which input is which: ids, past -> present, mask, positions)
//     -> step 0, prefill: ids = the prompt [1, P], every past empty (cache length 0)
//     -> step k, decode:  ids = the last token [1, 1], past = step k-1's present
//   Each step's token is the argmax of the logits at its last position (greedy).
//
// fusebox plans a graph for one shape. A step whose shapes no plan was made for is imported and
// planned for them (its dims bound from the tensors it is given), and run kWarmUpRuns times
// untimed (a fresh plan's first runs are slower: generation.cpp says by how much), before the run
// that is timed; that setup is timed
// apart and reported on its own, not hidden in the run figures. A step whose shapes an earlier
// step had reuses that step's plan. How the cache is held (GenerateOptions::kv_cache):
//   grow         the cache is allocated at each step's length: the past copied into the arena,
//                present copied out (and, for a static-cache export, the host grows it by a
//                copy), so every step has new shapes and a plan of its own. What a "decoder with
//                past" export (present = Concat(past, new)) can only do.
//   preallocate  for a static-cache export (Hugging Face's StaticCache: a cache_position input,
//                present of past's shape, written by a scatter): the cache allocated once at its
//                final length (prompt + tokens - 1 positions), every decode step the same shapes,
//                so one plan serves them all; the planner writes present in place over past
//                (core/planner/lifetimes.h), so the cache stays in the decode plan's arena between
//                steps (a null input pointer, core/exec/executor.h) and no step copies it. The
//                price: each step attends over the whole preallocated length, masked.
// Each step's kv bytes are the bytes of the positions written so far: what any cache must hold,
// the lower bound the held bytes are shown against.
// The phases are named as profiler/phases.h names a serving trace's: prefill, decode.
//
// Recorded (GenerateOptions::record), each step's timed run is traced as `fusebox profile`
// traces a run (profiler/recorder.h: its ops, its workers), and the steps make one recording:
// each inside a range named for its phase and tokens ("prefill toks=16", "decode toks=1"), which
// is how profiler/phases.h splits a trace into phases (rule 3), so `fusebox trace` and the window
// read a generation as they read a serving engine's trace.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/workbench/settings.h"
#include "core/ir/tensor.h"
#include "profiler/recording.h"

namespace fusebox::workbench {

// How a decoder export's inputs and outputs are used by generation.
struct KvMapping {
  std::string how;  // how the pairs were found, for the report
  std::string ids;  // the token input (i64 [batch, seq])
  std::vector<std::pair<std::string, std::string>> pairs;  // past input -> present output
  std::vector<int> axis;       // per pair: the past's axis that is the cache length
  std::string logits;          // the output whose last position gives the next token
  std::string attention_mask;  // optional input, [batch, past + seq] of ones
  std::string position_ids;    // optional input, [batch, seq]: past .. past + seq - 1
  std::string cache_position;  // optional input, [seq]: the positions this step writes
  // A static cache: a cache_position input, and every present's cache axis the past's dim (the
  // same name): the step writes into the cache it is given rather than returning a longer one.
  bool static_cache = false;
};

// Reads `model` (a .onnx file) and finds the mapping: `given` pairs (--kv PAST=PRESENT) when there
// are any, else Optimum's names (past_key_values.* -> present.*), else inputs named past* whose
// outputs are present* with the same rest (one stacked past/present tensor among them). The inputs
// named in `consts` (the `consts` setting) are the graph's constants, fed by nobody; one naming an
// input generate feeds (the ids, a cache, the mask, the positions) is refused. Throws
// fusebox::Error naming the file and what is missing or ambiguous.
KvMapping find_kv_mapping(const std::string& model, const std::vector<std::pair<std::string, std::string>>& given,
                          const std::set<std::string>& consts = {});

struct GenerateOptions {
  Settings settings;  // the model and how it runs (dims and inputs are set per step; consts hold)
  std::vector<int64_t> prompt;       // the prompt's token ids
  int tokens = 32;                   // tokens to generate, >= 1
  std::vector<std::pair<std::string, std::string>> kv;  // --kv pairs; empty: found from the names
  // Record each step's timed run into Generation::recording. The run times then include the
  // recorder's hooks (two timestamps an op).
  bool record = false;
  // How the cache is held (the header): "grow" | "preallocate" | "auto" (preallocate for a
  // static-cache export, else grow).
  std::string kv_cache = "auto";
};

struct GenerationStep {
  std::string phase;  // "prefill" | "decode"
  int64_t past = 0;   // cache length before the step
  int64_t seq = 0;    // tokens the step takes
  double setup_ms = 0;  // setup: import, plan and the untimed warm-up runs of this step's shape
  double run_ms = 0;    // the run itself
  int64_t token = 0;    // the token it made
  int64_t kv_bytes = 0;         // bytes of the cache's positions written so far (the lower bound)
  int64_t kv_held_bytes = 0;    // bytes of the cache as allocated for the step
  int64_t kv_copied_bytes = 0;  // cache bytes the timed run copied in and out, and the host's growing copy
  bool new_plan = false;        // the step's shapes needed a plan of their own (setup_ms > 0)
};

struct Generation {
  KvMapping mapping;
  std::string kv_cache;       // "grow" | "preallocate": how it was held
  int64_t cache_length = 0;   // preallocate: the positions allocated; grow: 0
  bool in_place = false;      // preallocate: every decode plan wrote present over past
  std::string not_in_place;   // preallocate, not in place: why
  std::string model;
  std::vector<int64_t> prompt, tokens;  // tokens: the generated ones
  std::vector<GenerationStep> steps;    // steps[0] is the prefill
  std::vector<float> logits;            // [steps][vocab]: each step's last-position logits
  int64_t vocab = 0;
  // Summaries of the runs (setup apart): time to first token (the prefill's run), the
  // decode steps' per-token latency (median, p10, p90) and tokens per second (decode tokens over
  // their summed run time), the median setup per step.
  double ttft_ms = 0, decode_median_ms = 0, decode_p10_ms = 0, decode_p90_ms = 0, tokens_per_s = 0;
  double setup_median_ms = 0;
  // With GenerateOptions::record: every step's run, each inside its phase's range, its nodes
  // (with their shapes at that step) after the previous step's, its run numbered by the step.
  std::optional<profiler::Recording> recording;
  std::string text() const;
};

// Runs the generation. `on_step` (may be empty) sees each step as it ends. Throws fusebox::Error
// for a model that is not a decoder export with a KV cache, a prompt token out of the vocabulary,
// or anything the import or the run refuses.
Generation generate(const GenerateOptions& options,
                    const std::function<void(const GenerationStep&)>& on_step = {});

// The range a recorded step runs inside: "<phase> toks=<tokens it took>".
std::string step_range_name(const GenerationStep& step);

extern const int kWarmUpRuns;  // a fresh plan's untimed runs before the timed one (2)

// Appends step `index`'s recording (one run of its own session) to `all`, as the header says:
// its spans inside one range (step_range_name) on the thread that ran it, its nodes renumbered
// after `all`'s, its run numbered `index`. `setup` (start, end on the recording's clock; nothing
// when end <= start) becomes a stage span before the range, named kSetupStage: the step's import,
// plan and untimed warm-up runs. The first step's also gives `all` its configuration.
extern const char* const kSetupStage;  // "setup: import, plan, warm-up runs"
// The counter track of the cache, in bytes: 0 at the prefill's start, then at each step's end the
// bytes of the positions written (GenerationStep::kv_bytes; a preallocated cache holds more).
extern const char* const kKvCacheCounter;  // "kv cache bytes"
void append_step_recording(profiler::Recording& all, const profiler::Recording& step_recording,
                           const GenerationStep& step, int64_t index,
                           std::pair<int64_t, int64_t> setup = {});

}  // namespace fusebox::workbench
