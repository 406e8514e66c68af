// Bounded random-mutation fuzzing of the importer: the asset models' bytes get seeded random
// flips, inserts, deletes and truncations; every import must either succeed or throw
// fusebox::Error (no crash, hang or sanitizer report). CI runs it under ASan+UBSan too.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "core/base/error.h"
#include "core/models/onnx_import.h"
#include "ops/cpu/cpu_backend.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUSEBOX_FUZZ_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSEBOX_FUZZ_SANITIZED 1
#endif
#endif

namespace fusebox {
namespace {

#ifdef FUSEBOX_FUZZ_SANITIZED
constexpr int kMutations = 400;
#else
constexpr int kMutations = 2000;
#endif

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string mutate(std::string bytes, std::mt19937_64& rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !bytes.empty(); ++e) {
    size_t at = rng() % bytes.size();
    switch (rng() % 5) {
      case 0: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8))); break;     // bit flip
      case 1: bytes[at] = static_cast<char>(rng()); break;                               // byte
      case 2: bytes.insert(at, 1 + rng() % 8, static_cast<char>(rng())); break;          // insert
      case 3: bytes.erase(at, 1 + rng() % 8); break;                                     // delete
      default: bytes.resize(at); break;                                                  // truncate
    }
  }
  return bytes;
}

TEST(OnnxFuzz, MutatedModelsImportOrThrowFusebosError) {
  auto cpu = cpu::make_backend();
  models::OnnxImportOptions opt;
  opt.evaluator = cpu.get();
  std::string dir = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models";
  // The small models (weights external or small), so one import takes microseconds.
  std::vector<std::string> seeds;
  for (const char* f : {"mlp_opset13.onnx", "transformer_opset13.onnx", "transformer_opset17.onnx"})
    seeds.push_back(slurp(dir + "/" + f));
  std::mt19937_64 rng(20261122);
  int ok = 0, refused = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kMutations; ++i) {
    std::string bytes = mutate(seeds[i % seeds.size()], rng);
    try {
      ir::Graph g = models::import_onnx_bytes(bytes, "mutant", opt, dir);
      ++ok;
    } catch (const Error&) {
      ++refused;
    }
    try {
      models::inspect_onnx_bytes(bytes, "mutant");
    } catch (const Error&) {
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz: %d mutations, %d imported, %d refused with fusebox::Error, %.1f s\n", kMutations, ok, refused, secs);
  EXPECT_EQ(ok + refused, kMutations);
  EXPECT_LT(secs, 60.0);
}

}  // namespace
}  // namespace fusebox
