// Nsight Compute CSV exports -> NcuReport -> KernelFigures (see ncu_report.h).
#include "profiler/ncu_report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace fusebox::profiler {

namespace {

constexpr size_t kMaxNcuBytes = size_t{256} << 20;  // a details export of thousands of launches

// ---- CSV (RFC 4180: quoted fields may hold commas, newlines and "" for a quote) ----------------

struct CsvRow {
  std::vector<std::string> fields;
  size_t line = 0;  // where it starts, from 1
};

std::vector<CsvRow> parse_csv(const std::string& text, const std::string& path) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  size_t line = 1, i = 0;
  bool quoted = false, any = false;
  row.line = 1;
  auto end_field = [&] {
    row.fields.push_back(std::move(field));
    field.clear();
  };
  auto end_row = [&] {
    if (any || !row.fields.empty()) {
      end_field();
      rows.push_back(std::move(row));
    }
    row = CsvRow{};
    row.line = line;
    any = false;
  };
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c, line += c == '\n';
      continue;
    }
    if (c == '"') quoted = any = true;
    else if (c == ',') end_field(), any = true;
    else if (c == '\n') ++line, end_row();
    else if (c != '\r') field += c, any = true;
  }
  if (quoted) throw Error(path + ":" + std::to_string(row.line) + ": a quoted field that never ends");
  end_row();
  return rows;
}

// ---- numbers as ncu writes them -----------------------------------------------------------------

// "13,485", "9,495.42", "0.7", "-3", "1e+06": thousands separators only in groups of three
// before the point. Anything else ("n/a", "1,5", "9.495,42") is not a number.
std::optional<double> ncu_number(const std::string& s) {
  std::string digits;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) digits += s[i++];
  size_t group = 0;  // digits since the last separator
  bool separators = false, any = false;
  for (; i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == ','); ++i) {
    if (s[i] == ',') {
      if (!any || (separators && group != 3) || (!separators && group > 3)) return std::nullopt;
      separators = true;
      group = 0;
      continue;
    }
    digits += s[i];
    ++group;
    any = true;
  }
  if (separators && group != 3) return std::nullopt;
  if (!any) return std::nullopt;
  const std::string rest = s.substr(i);
  if (!rest.empty()) {
    if (rest[0] != '.' && rest[0] != 'e' && rest[0] != 'E') return std::nullopt;
    if (rest.find(',') != std::string::npos) return std::nullopt;
    digits += rest;
  }
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  return v;
}

// ---- the two layouts ----------------------------------------------------------------------------

struct Columns {
  std::map<std::string, size_t> at;
  std::optional<size_t> get(const std::string& name) const {
    auto it = at.find(name);
    return it == at.end() ? std::nullopt : std::optional<size_t>(it->second);
  }
};

bool is_prof_line(const CsvRow& r) { return !r.fields.empty() && r.fields[0].rfind("==PROF==", 0) == 0; }

struct Reader {
  NcuReport& report;
  std::map<std::pair<std::string, std::string>, size_t>& by_launch;  // (folder, ID) -> kernel
  std::string folder;
  std::map<std::string, size_t> non_numbers;

  NcuKernel& kernel(const CsvRow& r, const Columns& c, const std::string& path) {
    auto f = [&](const char* name) -> std::string {
      auto k = c.get(name);
      return k && *k < r.fields.size() ? r.fields[*k] : std::string();
    };
    const std::string id = f("ID");
    auto [it, added] = by_launch.emplace(std::make_pair(folder, id), report.kernels.size());
    if (added) {
      NcuKernel k;
      k.id = id;
      k.name = f("Kernel Name");
      k.block = f("Block Size");
      k.grid = f("Grid Size");
      k.device = f("Device");
      k.cc = f("CC");
      k.stream = f("Stream");
      k.file = path;
      report.kernels.push_back(std::move(k));
    }
    return report.kernels[it->second];
  }

  NcuMetric metric(std::string section, std::string name, std::string unit, std::string text) {
    NcuMetric m{std::move(section), std::move(name), std::move(unit), std::move(text), std::nullopt};
    m.value = ncu_number(m.text);
    if (!m.value && m.text != "n/a" && !m.text.empty()) ++non_numbers[m.name];
    return m;
  }

  void details(const std::vector<CsvRow>& rows, size_t header, const Columns& c, const std::string& path) {
    const size_t width = rows[header].fields.size();
    const size_t need = *c.get("Metric Value") + 1;
    for (size_t i = header + 1; i < rows.size(); ++i) {
      const CsvRow& r = rows[i];
      if (is_prof_line(r)) continue;
      if (r.fields.size() < need || r.fields.size() > width + 1)
        throw Error(path + ":" + std::to_string(r.line) + ": " + std::to_string(r.fields.size()) +
                    " fields, the header has " + std::to_string(width) + " (a truncated or foreign row)");
      NcuKernel& k = kernel(r, c, path);
      auto f = [&](const char* name) -> std::string {
        auto col = c.get(name);
        return col && *col < r.fields.size() ? r.fields[*col] : std::string();
      };
      if (!f("Rule Name").empty()) {
        NcuRule rule{f("Section Name"), f("Rule Name"), f("Rule Type"), f("Rule Description"),
                     f("Estimated Speedup Type"), ncu_number(f("Estimated Speedup"))};
        const bool seen = std::any_of(k.rules.begin(), k.rules.end(), [&](const NcuRule& x) {
          return x.section == rule.section && x.name == rule.name && x.description == rule.description;
        });
        if (!seen) k.rules.push_back(std::move(rule));
        continue;
      }
      if (f("Metric Name").empty()) continue;  // a section's empty row
      if (k.find(f("Metric Name"), f("Section Name"))) continue;  // the same metric from another file
      k.metrics.push_back(metric(f("Section Name"), f("Metric Name"), f("Metric Unit"), f("Metric Value")));
    }
  }

  // --page raw: the header names the metrics, the next row their units, then one row per launch.
  void raw(const std::vector<CsvRow>& rows, size_t header, const Columns& c, const std::string& path) {
    const std::vector<std::string>& names = rows[header].fields;
    if (header + 1 >= rows.size()) return;
    const std::vector<std::string>& units = rows[header + 1].fields;
    static const std::set<std::string> kIdentity = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name",
                                                    "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"};
    for (size_t i = header + 2; i < rows.size(); ++i) {
      const CsvRow& r = rows[i];
      if (is_prof_line(r)) continue;
      if (r.fields.size() != names.size())
        throw Error(path + ":" + std::to_string(r.line) + ": " + std::to_string(r.fields.size()) +
                    " fields, the header has " + std::to_string(names.size()) + " (a truncated or foreign row)");
      NcuKernel& k = kernel(r, c, path);
      for (size_t col = 0; col < names.size(); ++col)
        if (!kIdentity.count(names[col]) && !k.find(names[col]))
          k.metrics.push_back(metric("raw", names[col], col < units.size() ? units[col] : "", r.fields[col]));
    }
  }

  void file(const std::string& path) {
    const std::vector<CsvRow> rows = parse_csv(read_file(path, kMaxNcuBytes), path);
    size_t header = 0;
    while (header < rows.size() && is_prof_line(rows[header])) ++header;
    if (header == rows.size()) throw Error(path + ": no CSV rows (an ncu export has a header row)");
    Columns c;
    for (size_t k = 0; k < rows[header].fields.size(); ++k) c.at.emplace(rows[header].fields[k], k);
    if (!c.get("ID") || !c.get("Kernel Name"))
      throw Error(path + ":" + std::to_string(rows[header].line) +
                  ": not an Nsight Compute export (its header has no \"ID\" and \"Kernel Name\"; "
                  "expected ncu --csv --page details or --page raw)");
    if (c.get("Metric Name") && c.get("Metric Value") && c.get("Section Name")) details(rows, header, c, path);
    else raw(rows, header, c, path);
  }
};

}  // namespace

bool looks_like_ncu_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"Kernel Name\"") != std::string::npos || head.find("Kernel Name,") != std::string::npos;
}

const NcuMetric* NcuKernel::find(const std::string& metric, const std::string& section) const {
  for (const NcuMetric& m : metrics)
    if (m.name == metric && (section.empty() || m.section == section)) return &m;
  return nullptr;
}

NcuReport read_ncu(const std::string& path) {
  NcuReport report;
  std::map<std::pair<std::string, std::string>, size_t> by_launch;
  std::error_code ec;
  std::vector<std::string> files;
  if (std::filesystem::is_directory(path, ec)) {
    std::error_code list;
    for (auto it = std::filesystem::recursive_directory_iterator(path, list);
         !list && it != std::filesystem::recursive_directory_iterator(); it.increment(list)) {
      std::error_code entry;
      if (it->is_regular_file(entry) && it->path().extension() == ".csv") files.push_back(it->path().string());
    }
    if (list) throw Error(path + ": cannot list the folder: " + list.message());
    std::sort(files.begin(), files.end());
    std::erase_if(files, [](const std::string& f) { return !looks_like_ncu_csv(f); });
    if (files.empty()) throw Error(path + ": a folder with no Nsight Compute CSV export in it");
  } else {
    files.push_back(path);
  }
  Reader reader{report, by_launch, "", {}};
  for (const std::string& f : files) {
    // Launches are one kernel across the files of one folder (details and per-section exports).
    reader.folder = std::filesystem::path(f).parent_path().string();
    reader.file(f);
  }
  for (const auto& [name, n] : reader.non_numbers)
    report.warnings.push_back(std::to_string(n) + " value" + (n == 1 ? "" : "s") + " of '" + name +
                              "' not a number as ncu writes one (a locale's decimal comma?): kept as text");
  if (report.kernels.empty()) throw Error(path + ": no kernel launches in the export");
  return report;
}

namespace {

std::optional<double> in_base(const NcuMetric* m) { return ncu_in_base(m); }

std::optional<double> plain(const NcuMetric* m) { return m ? m->value : std::nullopt; }

}  // namespace

KernelFigures kernel_figures(const NcuKernel& k) {
  KernelFigures f;
  f.name = k.name;
  f.block = k.block;
  f.grid = k.grid;
  const std::string sol = "GPU Speed Of Light Throughput";
  f.duration_ns = in_base(k.find("Duration", sol));
  if (!f.duration_ns) f.duration_ns = in_base(k.find("gpu__time_duration.sum"));
  f.sm_throughput_pct = plain(k.find("Compute (SM) Throughput", sol));
  f.memory_throughput_pct = plain(k.find("Memory Throughput", sol));
  f.l1_throughput_pct = plain(k.find("L1/TEX Cache Throughput", sol));
  f.l2_throughput_pct = plain(k.find("L2 Cache Throughput", sol));
  f.dram_throughput_pct = plain(k.find("DRAM Throughput", sol));
  const std::pair<const char*, std::optional<double>> units[] = {
      {"SM", f.sm_throughput_pct}, {"L1/TEX", f.l1_throughput_pct}, {"L2", f.l2_throughput_pct},
      {"DRAM", f.dram_throughput_pct}};
  double top = -1;
  for (const auto& [unit, pct] : units)
    if (pct && *pct > top) top = *pct, f.limiter = unit;

  const std::string occ = "Occupancy";
  f.theoretical_occupancy_pct = plain(k.find("Theoretical Occupancy", occ));
  f.achieved_occupancy_pct = plain(k.find("Achieved Occupancy", occ));
  const std::pair<const char*, const char*> limits[] = {{"Block Limit Registers", "registers"},
                                                        {"Block Limit Shared Mem", "shared memory"},
                                                        {"Block Limit Warps", "warps"},
                                                        {"Block Limit SM", "SM"},
                                                        {"Block Limit Barriers", "barriers"}};
  for (const auto& [metric, what] : limits) {
    const std::optional<double> v = plain(k.find(metric, occ));
    if (v && (!f.occupancy_limit_blocks || *v < *f.occupancy_limit_blocks))
      f.occupancy_limit_blocks = v, f.occupancy_limiter = what;
  }
  // At 100% theoretical occupancy the smallest block limit is where the warp maximum is reached
  // (often tied with "warps"): nothing limits it.
  if (f.theoretical_occupancy_pct && *f.theoretical_occupancy_pct >= 100) f.occupancy_limiter.clear();

  const std::string mem = "Memory Workload Analysis";
  f.l1_hit_pct = plain(k.find("L1/TEX Hit Rate", mem));
  f.l2_hit_pct = plain(k.find("L2 Hit Rate", mem));
  if (const std::optional<double> bps = in_base(k.find("Memory Throughput", mem))) f.dram_gbytes_per_s = *bps / 1e9;

  const std::string sched = "Scheduler Statistics";
  f.eligible_warps = plain(k.find("Eligible Warps Per Scheduler", sched));
  f.issued_warps = plain(k.find("Issued Warp Per Scheduler", sched));
  f.no_eligible_pct = plain(k.find("No Eligible", sched));
  f.rules = k.rules;
  f.roofline = gpu_roofline(k);
  f.findings = kernel_findings(k, f);
  return f;
}

std::string kernel_figures_text(const KernelFigures& f, bool findings) {
  auto num = [](const std::optional<double>& v, const char* fmt, const char* missing) {
    if (!v) return std::string(missing);
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, *v);
    return std::string(buf);
  };
  const char* none = "not in this report";
  std::string out = f.name + "\n";
  out += "  launch: grid " + f.grid + ", block " + f.block + "; duration " +
         num(f.duration_ns ? std::optional<double>(*f.duration_ns / 1000) : std::nullopt, "%.2f us", "not in this report") +
         "\n";
  if (f.limiter.empty()) {
    out += std::string("  speed of light: ") + none + " (needs section SpeedOfLight)\n";
  } else {
    out += "  speed of light: compute (SM) " + num(f.sm_throughput_pct, "%.2f%%", "-") + ", memory " +
           num(f.memory_throughput_pct, "%.2f%%", "-") + " (L1/TEX " + num(f.l1_throughput_pct, "%.2f%%", "-") +
           ", L2 " + num(f.l2_throughput_pct, "%.2f%%", "-") + ", DRAM " + num(f.dram_throughput_pct, "%.2f%%", "-") +
           "); nearest its peak: " + f.limiter + "\n";
  }
  if (!f.theoretical_occupancy_pct && !f.achieved_occupancy_pct) {
    out += std::string("  occupancy: ") + none + " (needs section Occupancy)\n";
  } else {
    out += "  occupancy: theoretical " + num(f.theoretical_occupancy_pct, "%.2f%%", "-") + ", achieved " +
           num(f.achieved_occupancy_pct, "%.2f%%", "-");
    if (!f.occupancy_limiter.empty())
      out += "; limited by " + f.occupancy_limiter + " (" + num(f.occupancy_limit_blocks, "%.0f", "-") +
             (f.occupancy_limit_blocks && *f.occupancy_limit_blocks == 1 ? " block" : " blocks") + " per SM)";
    else if (f.theoretical_occupancy_pct && *f.theoretical_occupancy_pct >= 100)
      out += "; at the hardware's warp maximum";
    out += "\n";
  }
  if (!f.l1_hit_pct && !f.l2_hit_pct && !f.dram_gbytes_per_s)
    out += std::string("  memory: ") + none + " (needs section MemoryWorkloadAnalysis)\n";
  else
    out += "  memory: L1/TEX hit " + num(f.l1_hit_pct, "%.2f%%", "-") + ", L2 hit " + num(f.l2_hit_pct, "%.2f%%", "-") +
           ", DRAM " + num(f.dram_gbytes_per_s, "%.2f GB/s", "-") + "\n";
  if (!f.eligible_warps && !f.issued_warps && !f.no_eligible_pct)
    out += std::string("  schedulers: ") + none + " (needs section SchedulerStats)\n";
  else
    out += "  schedulers: eligible warps " + num(f.eligible_warps, "%.2f", "-") + ", issued " +
           num(f.issued_warps, "%.2f", "-") + " per cycle, no eligible " + num(f.no_eligible_pct, "%.2f%%", "-") + "\n";
  const GpuRoofline& r = f.roofline;
  if (r.pct_of_roof) {
    out += "  roofline (FP32, at DRAM): " + num(r.achieved_flops ? std::optional<double>(*r.achieved_flops / 1e9) : std::nullopt, "%.1f GFLOP/s", "-") +
           " at " + num(r.intensity, "%.3g FLOP/byte", "-") + "; roof " +
           num(std::optional<double>(*r.roof_flops / 1e9), "%.1f GFLOP/s", "-") + " (" + r.bound + "-bound, ridge " +
           num(std::optional<double>(*r.peak_flops / *r.dram_peak_bytes_per_s), "%.3g FLOP/byte", "-") + "): " +
           num(r.pct_of_roof, "%.1f%%", "-") + " of it" + (r.note.empty() ? "" : "; " + r.note) + "\n";
  } else {
    out += "  roofline (FP32, at DRAM): " + r.note + "\n";
  }
  if (findings) out += "  fine-grained, by estimated gain (definitions: profiler/kernel_findings.h):\n";
  std::string untold;  // the items the report cannot tell, one line
  for (const KernelFinding& x : findings ? f.findings : std::vector<KernelFinding>{}) {
    if (!x.measured) {
      untold += (untold.empty() ? "" : "; ") + x.item + " (" + x.needs + ")";
      continue;
    }
    out += "    " + x.item + ": " + x.text;
    if (x.gain_pct) out += " [est. " + num(x.gain_pct, "%.1f%%", "-") + ", " + x.gain_source + "]";
    out += "\n";
  }
  if (!untold.empty()) out += "    not in this report: " + untold + "\n";
  for (const NcuRule& r : f.rules) {
    if (r.type == "INF") continue;  // information, not advice
    out += "  ncu " + r.name + " (" + r.type + (r.speedup ? ", est. speedup " + num(r.speedup, "%.2f%%", "") : "") +
           "): " + r.description + "\n";
  }
  return out;
}

nlohmann::json kernel_figures_json(const KernelFigures& f) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json rules = nlohmann::json::array();
  for (const NcuRule& r : f.rules)
    rules.push_back({{"section", r.section}, {"name", r.name}, {"type", r.type}, {"description", r.description},
                     {"speedup_type", r.speedup_type}, {"speedup_pct", opt(r.speedup)}});
  nlohmann::json findings = nlohmann::json::array();
  for (const KernelFinding& x : f.findings)
    findings.push_back({{"item", x.item}, {"measured", x.measured}, {"text", x.text}, {"gain_pct", opt(x.gain_pct)},
                        {"gain_source", x.gain_source}});
  const GpuRoofline& r = f.roofline;
  return {{"name", f.name},
          {"grid", f.grid},
          {"block", f.block},
          {"duration_ns", opt(f.duration_ns)},
          {"sm_throughput_pct", opt(f.sm_throughput_pct)},
          {"memory_throughput_pct", opt(f.memory_throughput_pct)},
          {"l1_throughput_pct", opt(f.l1_throughput_pct)},
          {"l2_throughput_pct", opt(f.l2_throughput_pct)},
          {"dram_throughput_pct", opt(f.dram_throughput_pct)},
          {"limiter", f.limiter},
          {"theoretical_occupancy_pct", opt(f.theoretical_occupancy_pct)},
          {"achieved_occupancy_pct", opt(f.achieved_occupancy_pct)},
          {"occupancy_limiter", f.occupancy_limiter},
          {"occupancy_limit_blocks", opt(f.occupancy_limit_blocks)},
          {"l1_hit_pct", opt(f.l1_hit_pct)},
          {"l2_hit_pct", opt(f.l2_hit_pct)},
          {"dram_gbytes_per_s", opt(f.dram_gbytes_per_s)},
          {"eligible_warps", opt(f.eligible_warps)},
          {"issued_warps", opt(f.issued_warps)},
          {"no_eligible_pct", opt(f.no_eligible_pct)},
          {"roofline",
           {{"achieved_flops", opt(r.achieved_flops)},
            {"peak_flops", opt(r.peak_flops)},
            {"dram_bytes_per_s", opt(r.dram_bytes_per_s)},
            {"dram_peak_bytes_per_s", opt(r.dram_peak_bytes_per_s)},
            {"intensity", opt(r.intensity)},
            {"roof_flops", opt(r.roof_flops)},
            {"pct_of_roof", opt(r.pct_of_roof)},
            {"bound", r.bound},
            {"note", r.note}}},
          {"findings", findings},
          {"rules", rules}};
}

}  // namespace fusebox::profiler
