// REFX_TRACE_FILE's timeline, written by the static destructors at exit,
// of a program whose kernels use refx::map: the program exits cleanly (the
// names of map's primitives outlive the timeline that prints them; under
// ASan a dangling name is a heap-use-after-free), the file is valid UTF-8,
// and the map ops are named readably ("map#<n>", one n per function), not
// by a mangled C++ type. Run in the asan stage (scripts/reliability.sh).

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/json.hpp"
#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;
namespace js = refx::testing::json;

constexpr std::int64_t kElems = 64;

// Run as a child of the tests below (REFX_TIMELINE_AT_EXIT_CHILD set), from
// main() before GoogleTest starts. The global runtime, and with it the
// process timeline, is made before any map is traced: the maps' primitives
// are registered after the timeline that prints them at exit.
void child_process() {
  Runtime& rt = Runtime::global();
  const Executable k = kernel([](VmemRef<const float, kElems> x, VmemRef<float, kElems> y, VmemRef<float, kElems> z) {
                         const auto a = x.load();
                         y.store(map([](float v) { return v * 2.0f + 1.0f; }, a));
                         z.store(map([](float v, float w) { return v > w ? v : w; }, a, y.load()));
                       })
                           .name("two_maps")
                           .passes(passes::Options{.fuse = false})  // the maps are ops of their own
                           .compile(Mesh{{"x", 2}}, {}, rt);
  const Array x = Array::generate<float>(2, Shape{kElems}, tag);
  k(x)[0].block_until_ready();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The offset of the first byte of `s` that is not part of well-formed UTF-8
/// (no overlong forms, surrogates or code points above U+10FFFF), or npos.
std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (b < 0x80) n = 0;
    else if (b >= 0xc2 && b <= 0xdf) n = 1;
    else if (b >= 0xe0 && b <= 0xef) n = 2, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
    else if (b >= 0xf0 && b <= 0xf4) n = 3, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
    else return i;
    if (i + n >= s.size()) return i;  // truncated
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

TEST(TimelineAtExit, Utf8CheckRejectsWhatItShould) {
  EXPECT_EQ(first_invalid_utf8("map#1 -> y \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("ab\xff"), 2u);
  EXPECT_EQ(first_invalid_utf8("a\xc3"), 1u);          // truncated
  EXPECT_EQ(first_invalid_utf8("a\xc0\x80"), 1u);      // overlong
  EXPECT_EQ(first_invalid_utf8("a\xed\xa0\x80"), 1u);  // a surrogate
  EXPECT_EQ(first_invalid_utf8("a\xe2\x82"), 1u);      // truncated
  EXPECT_EQ(first_invalid_utf8("a\xe2\x28\xa1"), 1u);  // a bad continuation byte
}

TEST(TimelineAtExit, MapKernelsTimelineIsWrittenAtExitWithReadableUtf8Names) {
  Watchdog dog(kTestLimit, "REFX_TRACE_FILE child with map");
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string path = fmt::format("{}refx_timeline_at_exit_{}.json", ::testing::TempDir(), name);
  const std::string err = fmt::format("{}refx_timeline_at_exit_{}.err", ::testing::TempDir(), name);
  std::remove(path.c_str());
  char self[4096] = {};
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0);
  const std::string command = fmt::format(
      "REFX_TIMELINE_AT_EXIT_CHILD=1 REFX_TRACE_FILE='{}' timeout 60 '{}' 2>'{}' >/dev/null", path, self, err);
  const int status = std::system(command.c_str());
  const std::string stderr_text = read_file(err);
  std::remove(err.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child exited with status " << status << ":\n"
                                                             << stderr_text;
  EXPECT_EQ(stderr_text, "");

  const std::string text = read_file(path);
  std::remove(path.c_str());
  const std::size_t bad = first_invalid_utf8(text);
  EXPECT_EQ(bad, std::string::npos) << "invalid UTF-8 at byte " << bad << ": "
                                    << text.substr(bad < 40 ? 0 : bad - 40, 80);
  const js::Value doc = js::Parser(text).document();
  std::set<std::string> map_ops;  // the "op" argument of the map slices
  int map_slices = 0;
  for (const js::Value& e : doc.at("traceEvents").array) {
    if (e.str("cat") != "op") continue;
    const std::string op = e.at("args").str("op");
    EXPECT_EQ(op.find("MapKernel"), std::string::npos) << op;
    if (!op.starts_with("map")) continue;
    ++map_slices;
    map_ops.insert(op);
    EXPECT_TRUE(e.str("name").starts_with(op)) << e.str("name");
  }
  // Both devices run both maps (unfused: each map is a slice of its own).
  EXPECT_EQ(map_slices, 2 * 2) << text;
  ASSERT_EQ(map_ops.size(), 2u);  // one name per function
  for (const std::string& op : map_ops) {
    ASSERT_GT(op.size(), 4u);
    EXPECT_EQ(op.substr(0, 4), "map#") << op;
    EXPECT_EQ(op.find_first_not_of("0123456789", 4), std::string::npos) << op;
  }
}

// A user's names in another encoding than UTF-8 (here Latin-1) become U+FFFD
// in the file; the valid bytes around them are kept.
TEST(TimelineAtExit, NamesThatAreNotUtf8BecomeReplacementCharacters) {
  Watchdog dog(kTestLimit, "non-UTF-8 names");
  Runtime rt(RuntimeOptions{});
  const Executable k = kernel([](VmemRef<const float, kElems> x, VmemRef<float, kElems> y) {
                         x.name("caf\xe9");            // Latin-1
                         y.name("\xc3\xa9t\xc3\xa9");  // UTF-8
                         y.store(x.load() + 1.0f);
                       })
                           .name("na\xefve")
                           .compile(Mesh{{"x", 1}}, {}, rt);
  rt.start_timeline();
  k(Array::generate<float>(1, Shape{kElems}, tag))[0].block_until_ready();
  const std::string text = rt.stop_timeline().json();
  const std::size_t bad = first_invalid_utf8(text);
  EXPECT_EQ(bad, std::string::npos) << "invalid UTF-8 at byte " << bad;
  const js::Value doc = js::Parser(text).document();  // \ufffd read back as its UTF-8 bytes
  std::set<std::string> kernels, slices;
  for (const js::Value& e : doc.at("traceEvents").array) {
    if (e.str("cat") == "kernel") kernels.insert(e.str("name"));
    if (e.str("cat") == "op") slices.insert(e.str("name"));
  }
  EXPECT_EQ(kernels, std::set<std::string>{"na\uFFFDve"}) << text;
  // The load, the add and the store are one fused op, named by both Refs.
  EXPECT_TRUE(slices.contains("fused caf\uFFFD \u00E9t\u00E9")) << text;
}

}  // namespace

// This test's own main (it replaces gtest_main's): the child mode first.
int main(int argc, char** argv) {
  if (std::getenv("REFX_TIMELINE_AT_EXIT_CHILD") != nullptr) {
    child_process();
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
