// doctest's main for the kiln test binaries. A run whose filters select no
// test case fails: CTest runs one case per process through --test-case, and a
// name that the filter cannot match (doctest_discover_tests splits names at
// ';') would otherwise pass without running anything.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

int g_cases_run = -1;  // -1: no test run happened (listing, --help)

// Records how many test cases passed the filters; reports nothing else.
struct CountingListener : doctest::IReporter {
  explicit CountingListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override {
    g_cases_run = static_cast<int>(s.numTestCasesPassingFilters);
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

REGISTER_LISTENER("kiln_case_count", 1, CountingListener);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit() || rc != 0) return rc;
  if (g_cases_run == 0) {
    std::fprintf(stderr, "kiln_tests: no test case matches the filters: nothing was tested\n");
    return 1;
  }
  return rc;
}
