// ir::assign_ew_registers against register assignments worked out by hand, and the error for a
// program that keeps too many results alive.
#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"
#include "core/ir/elementwise_program.h"

namespace fusebox::ir {
namespace {

std::vector<int> regs(const std::vector<std::string>& text, int inputs) {
  return assign_ew_registers(parse_ew_program(text, inputs), "the test kernel");
}

TEST(EwRegisters, LastInstructionWritesTheOutput) {
  EXPECT_EQ(regs({"Relu i0"}, 1), std::vector<int>{-1});
}

TEST(EwRegisters, ResultsAliveTogetherGetDistinctRegisters) {
  // r0 and r1 are both read by the last instruction.
  EXPECT_EQ(regs({"Add i0 i1", "Mul r0 i0", "Sub r1 r0"}, 2), (std::vector<int>{0, 1, -1}));
}

TEST(EwRegisters, AChainReusesRegistersButNeverItsOperands) {
  // r1 cannot take r0's register (its operand); r2 takes it back once r0 is read.
  EXPECT_EQ(regs({"Relu i0", "Neg r0", "Exp r1", "Sqrt r2"}, 1), (std::vector<int>{0, 1, 0, -1}));
}

TEST(EwRegisters, AnUnreadResultFreesItsRegisterAtOnce) {
  EXPECT_EQ(regs({"Relu i0", "Exp i0", "Neg r1"}, 1), (std::vector<int>{0, 0, -1}));
}

// `n` results of input 0, then their sum: n results alive at once, plus the first sum's.
std::vector<std::string> wide(int n) {
  std::vector<std::string> text;
  for (int k = 0; k < n; ++k) text.push_back("Exp i0");  // r0 .. r(n-1)
  text.push_back("Add r0 r1");
  for (int k = 2; k < n; ++k)
    text.push_back("Add r" + std::to_string(text.size() - 1) + " r" + std::to_string(k));
  return text;
}

TEST(EwRegisters, SixteenRegistersHoldFifteenLiveResultsAndTheirFirstSum) {
  const std::vector<int> reg = regs(wide(kMaxEwLiveResults - 1), 1);
  for (int k = 0; k < kMaxEwLiveResults; ++k) EXPECT_EQ(reg[k], k) << k;
}

TEST(EwRegisters, SeventeenAreRefused) {
  try {
    regs(wide(kMaxEwLiveResults), 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "program keeps more than 16 intermediate results alive at once (at instruction 16); "
              "the test "
              "kernel supports 16: split the chain into several FusedElementwise nodes");
  }
}

}  // namespace
}  // namespace fusebox::ir
