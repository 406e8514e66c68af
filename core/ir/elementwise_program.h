#pragma once
// The op program of a FusedElementwise node, stored in its `program` attribute as readable
// strings, one instruction each: "Div i0 i1", "Erf r0", "Add r1 i2", "Mul i0 r2", "Mul r3 i3".
// Operands: iN is the node's input N (broadcast to the output shape), rN the result of
// instruction N. The last instruction's result is the output.
#include <cstdint>
#include <string>
#include <vector>

namespace fusebox::ir {

// What every backend's FusedElementwise kernel runs: programs of at most kMaxEwInstructions
// instructions that keep at most kMaxEwLiveResults intermediate results alive at once. A program
// of at most kMaxEwLiveResults instructions always fits, whatever its shape; fuse_elementwise
// cuts longer chains into programs that size.
inline constexpr int kMaxEwInstructions = 64;
inline constexpr int kMaxEwLiveResults = 16;

enum class EwOp : uint8_t {
  // binary
  Add, Sub, Mul, Div, Pow,
  // unary
  Relu, Gelu, GeluTanh, Tanh, Sigmoid, Exp, Erf, Sqrt, Neg,
};

struct EwOperand {
  bool is_input = true;  // true: node input `index`; false: result of instruction `index`
  int index = 0;
};

struct EwInstr {
  EwOp op;
  EwOperand a;
  EwOperand b;  // unused for unary ops
};

bool ew_is_binary(EwOp op);
const char* ew_name(EwOp op);
// The element-wise op name as a graph op ("Add", "Gelu") and attributes -> EwOp; false if the
// op is not element-wise-fusable. Gelu with approximate="tanh" maps to GeluTanh.
bool ew_from_op(const std::string& op, const std::string& gelu_approximate, EwOp* out);

// Parses and validates a program against its input count; throws fusebox::Error naming the
// bad instruction.
std::vector<EwInstr> parse_ew_program(const std::vector<std::string>& program, int num_inputs);
std::string format_ew_instr(const EwInstr& instr);

// What every backend's interpreter does with a parsed program before it runs: the register of
// each instruction's result, by liveness (the last instruction's is -1: it writes the output).
// Instruction k takes a free register, never one of its own operands' (freed only after it is
// assigned, so loops never read and write the same buffer), and its operands' registers are
// freed after their last reader. Throws fusebox::Error when more than kMaxEwLiveResults results
// would be alive at once; the message names `kernel` ("the CPU kernel") as what supports that many.
std::vector<int> assign_ew_registers(const std::vector<EwInstr>& program,
                                     const std::string& kernel);

}  // namespace fusebox::ir
