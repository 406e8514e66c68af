#include "core/ir/elementwise_program.h"

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::ir {

namespace {
struct EwInfo {
  EwOp op;
  const char* name;
  bool binary;
};
constexpr EwInfo kEwOps[] = {
    {EwOp::Add, "Add", true},       {EwOp::Sub, "Sub", true},
    {EwOp::Mul, "Mul", true},       {EwOp::Div, "Div", true},
    {EwOp::Pow, "Pow", true},       {EwOp::Relu, "Relu", false},
    {EwOp::Gelu, "Gelu", false},    {EwOp::GeluTanh, "GeluTanh", false},
    {EwOp::Tanh, "Tanh", false},    {EwOp::Sigmoid, "Sigmoid", false},
    {EwOp::Exp, "Exp", false},      {EwOp::Erf, "Erf", false},
    {EwOp::Sqrt, "Sqrt", false},    {EwOp::Neg, "Neg", false},
};

const EwInfo& info(EwOp op) {
  for (const auto& i : kEwOps)
    if (i.op == op) return i;
  throw Error("internal: unknown element-wise op");
}

EwOperand parse_operand(const std::string& text, int num_inputs, int instr_index,
                        const std::string& where) {
  if (text.size() < 2 || (text[0] != 'i' && text[0] != 'r'))
    throw Error(where + ": operand '" + text + "' is not iN or rN");
  EwOperand o;
  o.is_input = text[0] == 'i';
  o.index = static_cast<int>(parse_int(text.substr(1), where + ": operand '" + text + "'"));
  if (o.is_input && (o.index < 0 || o.index >= num_inputs))
    throw Error(where + ": input " + text + " does not exist (node has " +
                std::to_string(num_inputs) + " inputs)");
  if (!o.is_input && (o.index < 0 || o.index >= instr_index))
    throw Error(where + ": result " + text + " is not computed before this instruction");
  return o;
}

std::string operand_str(const EwOperand& o) {
  return (o.is_input ? "i" : "r") + std::to_string(o.index);
}
}  // namespace

bool ew_is_binary(EwOp op) { return info(op).binary; }
const char* ew_name(EwOp op) { return info(op).name; }

bool ew_from_op(const std::string& op, const std::string& gelu_approximate, EwOp* out) {
  if (op == "Gelu") {
    *out = gelu_approximate == "tanh" ? EwOp::GeluTanh : EwOp::Gelu;
    return true;
  }
  if (op == "GeluTanh") return false;  // not a graph op
  for (const auto& i : kEwOps) {
    if (op == i.name) {
      *out = i.op;
      return true;
    }
  }
  return false;
}

std::vector<EwInstr> parse_ew_program(const std::vector<std::string>& program, int num_inputs) {
  if (program.empty()) throw Error("FusedElementwise program is empty");
  std::vector<EwInstr> instrs;
  for (size_t k = 0; k < program.size(); ++k) {
    std::string where = "FusedElementwise instruction " + std::to_string(k) + " '" + program[k] + "'";
    std::vector<std::string> parts;
    for (auto& p : split(trim(program[k]), ' '))
      if (!p.empty()) parts.push_back(p);
    if (parts.empty()) throw Error(where + ": empty");
    const EwInfo* found = nullptr;
    for (const auto& i : kEwOps)
      if (parts[0] == i.name) found = &i;
    if (!found) throw Error(where + ": unknown op '" + parts[0] + "'");
    size_t want = found->binary ? 3 : 2;
    if (parts.size() != want)
      throw Error(where + ": " + parts[0] + " takes " + std::to_string(want - 1) + " operand(s)");
    EwInstr instr{found->op, parse_operand(parts[1], num_inputs, static_cast<int>(k), where), {}};
    if (found->binary) instr.b = parse_operand(parts[2], num_inputs, static_cast<int>(k), where);
    instrs.push_back(instr);
  }
  return instrs;
}

std::string format_ew_instr(const EwInstr& instr) {
  std::string s = std::string(ew_name(instr.op)) + " " + operand_str(instr.a);
  if (ew_is_binary(instr.op)) s += " " + operand_str(instr.b);
  return s;
}

std::vector<int> assign_ew_registers(const std::vector<EwInstr>& program,
                                     const std::string& kernel) {
  const int count = static_cast<int>(program.size());
  std::vector<int> last_use(count, -1);
  for (int k = 0; k < count; ++k) {
    const EwInstr& ins = program[k];
    if (!ins.a.is_input) last_use[ins.a.index] = k;
    if (ew_is_binary(ins.op) && !ins.b.is_input) last_use[ins.b.index] = k;
  }
  std::vector<int> reg(count, -1), free_regs;
  int used = 0;
  for (int k = 0; k + 1 < count; ++k) {
    if (free_regs.empty()) {
      if (used == kMaxEwLiveResults)
        throw Error("program keeps more than " + std::to_string(kMaxEwLiveResults) +
                    " intermediate results alive at once (at instruction " + std::to_string(k) +
                    "); " + kernel + " supports " + std::to_string(kMaxEwLiveResults) +
                    ": split the chain into several FusedElementwise nodes");
      free_regs.push_back(used++);
    }
    reg[k] = free_regs.back();
    free_regs.pop_back();
    for (int j = 0; j <= k; ++j)
      if (last_use[j] == k || (j == k && last_use[j] < 0)) free_regs.push_back(reg[j]);
  }
  return reg;
}

}  // namespace fusebox::ir
