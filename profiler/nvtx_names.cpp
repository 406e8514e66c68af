#include "profiler/nvtx_names.h"

namespace fusebox::profiler {

const char* nvtx_domain_name() { return "fusebox"; }

uint32_t op_color(const std::string& op_type) {
  // Distinct, readable colors (ARGB); the op type picks one with FNV-1a so it is stable.
  static const uint32_t palette[] = {0xFF1F77B4, 0xFFFF7F0E, 0xFF2CA02C, 0xFFD62728, 0xFF9467BD, 0xFF8C564B,
                                     0xFFE377C2, 0xFF7F7F7F, 0xFFBCBD22, 0xFF17BECF, 0xFF393B79, 0xFF637939};
  uint32_t h = 2166136261u;
  for (unsigned char c : op_type) h = (h ^ c) * 16777619u;
  return palette[h % (sizeof(palette) / sizeof(palette[0]))];
}
uint32_t run_color() { return 0xFF4C72B0; }
uint32_t stage_color() { return 0xFFDD8452; }

}  // namespace fusebox::profiler
