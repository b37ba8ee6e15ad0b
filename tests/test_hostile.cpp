// Hostile sizes and values: shapes whose element count overflows 64 bits,
// negative and absurd dims, NaN and infinities through every op, zero-size
// tensors through every op. Bad sizes raise kiln::Error with an "[op] ..."
// message (never a crash, a hang or a huge allocation); NaN and infinities
// propagate as IEEE 754 and PyTorch say (values below from PyTorch 1.13),
// never trapping; zero-size tensors give PyTorch's shapes and values.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::indexing;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// f must raise kiln::Error whose message starts with "[op] " and contains `part`.
void check_error(const std::function<void()>& f, const std::string& op, const std::string& part) {
  std::string msg;
  try {
    f();
  } catch (const Error& e) {
    msg = e.what();
  }
  CAPTURE(op);
  CAPTURE(part);
  CAPTURE(msg);
  CHECK(msg.rfind("[" + op + "] ", 0) == 0);
  CHECK(msg.find(part) != std::string::npos);
}

}  // namespace

TEST_CASE("hostile: shapes whose element count overflows 64 bits") {
  const int64_t big = int64_t{1} << 32;
  check_error([&] { empty({big, big}); }, "empty", "overflow");
  check_error([&] { zeros({kMax, 2}); }, "zeros", "overflow");
  check_error([&] { ones({big, big, 4}, kFloat64); }, "ones", "overflow");
  check_error([&] { full({3, big, big}, 1.5); }, "full", "overflow");
  check_error([&] { randn({big, big}); }, "randn", "overflow");
  check_error([&] { ones({1, 3}).expand({big, big, 3}); }, "expand", "overflow");
  check_error([&] { ones({big}).reshape({big, 1}).expand({big, big}); }, "expand", "overflow");
  check_error([&] { ones({big}).unsqueeze(1).expand({-1, big}); }, "expand", "overflow");
  // UBSan: the known dims' product overflowed while inferring a -1.
  check_error([&] { empty({0}).view({big, big, -1}); }, "view", "is invalid for input of size 0");
  check_error([&] { empty({0}).reshape({-1, big, big}); }, "reshape", "is invalid for input of size 0");
  // Still usable.
  CHECK(ones({2, 3}).sum().item<float>() == 6.0f);
}

TEST_CASE("hostile: negative and absurd dims") {
  check_error([] { empty({-1}); }, "empty", "negative dimension -1");
  check_error([] { zeros({2, -3}); }, "zeros", "negative dimension -3");
  check_error([] { randn({-2}); }, "randn", "negative dimension -2");
  check_error([] { full({-1}, 2); }, "full", "negative dimension -1");
  check_error([] { eye(-1); }, "eye", "-1");
  check_error([] { linspace(0, 1, -1); }, "linspace", "-1");
  check_error([] { arange(0, 10, 0); }, "arange", "step");
  check_error([] { ones({2, 3}).reshape({-2, 3}); }, "reshape", "-2");
  check_error([] { ones({2, 3}).view({-1, -1}); }, "view", "only one dimension can be inferred");
  check_error([] { ones({2, 3}).expand({-2, 3}); }, "expand", "-2");
  check_error([] { ones({2, 3}).narrow(0, -5, 2); }, "narrow", "out of range");
  check_error([] { ones({2, 3}).narrow(1, 1, kMax); }, "narrow", "exceeds");
  check_error([] { ones({2, 3}).narrow(1, kMax, 1); }, "narrow", "out of range");
  check_error([] { ones({2, 3}).select(0, kMax); }, "select", "out of bounds");
  check_error([] { ones({2, 3}).select(0, std::numeric_limits<int64_t>::min()); }, "select", "out of bounds");
  check_error([] { ones({2, 3}).transpose(5, 0); }, "transpose", "Dimension out of range");
  check_error([] { ones({2, 3}).sum(kMax); }, "sum", "Dimension out of range");
  check_error([] { ones({2, 3}).unsqueeze(-kMax); }, "unsqueeze", "Dimension out of range");
  check_error([] { ones({2, 3}).split(0); }, "split", "0");
  check_error([] { ones({2, 3}).chunk(0); }, "chunk", "0");
  check_error([] { ones({4}).index({Slice(0, None, 0)}); }, "slice", "step must be positive (got 0)");
  check_error([] { ones({4}).index({Slice(0, None, -1)}); }, "slice", "step must be positive (got -1)");
  // Slices clamp absurd bounds, as Python's do.
  CHECK(ones({4}).index({Slice(-kMax, kMax)}).numel() == 4);
  CHECK(ones({4}).index({Slice(kMax, None)}).numel() == 0);
  CHECK(ones({4}).index({Slice(2, None, kMax)}).sizes() == Shape{1});
  CHECK(arange(4).index({Slice(1, None, kMax)}).item<int64_t>() == 1);
  CHECK(arange(12).reshape({4, 3}).slice(0, 1, std::nullopt, kMax).sizes() == Shape{1, 3});
  CHECK(arange(12).reshape({4, 3}).slice(0, 1, std::nullopt, kMax).sum().item<int64_t>() == 12);
  // An absurd but representable size: refused when its memory is asked for.
  check_error([] { empty({kMax}, kUInt8).eval(); }, "allocate", "");
  CHECK(ones({2, 3}).sum().item<float>() == 6.0f);
}
