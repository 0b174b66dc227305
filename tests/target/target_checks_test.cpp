// Kernel::target(t): the fidelity checks of passes/target_checks.hpp, each
// with a kernel that passes and one that breaks the rule (docs/targets.md),
// the warn mode that collects them all, and a user-described target.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <refx/pipeline.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;
using ::testing::HasSubstr;

const auto same = [](std::int64_t i) { return std::array{i, std::int64_t{0}}; };

/// The message of the TraceError compiling `k` for `t` throws ("" if none).
template <class K>
std::string compile_error(const K& k, const Target& t, const Mesh& mesh = Mesh{{"x", 1}}) {
  try {
    (void)kernel(k).target(t).compile(mesh);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

std::string here(int line) { return "target_checks_test.cpp:" + std::to_string(line); }

// ---- tiling: a pipeline block's last two extents against the array's.

TEST(TargetTiling, BlocksOfWholeTilesOrWholeDimensionsPass) {
  const auto tiles = [](HbmRef<const float, 96, 256> x, HbmRef<float, 96, 256> z) {
    emit_pipeline(grid(3), [](VmemRef<const float, 32, 256> xb, VmemRef<float, 32, 256> zb) { zb.store(xb.load()); })(
        in(x, block<32, 256>(same)), out(z, block<32, 256>(same)));
  };
  EXPECT_EQ(compile_error(tiles, targets::v5e()), "");
  // 12 rows are not a multiple of 8, but they are the whole array's rows.
  const auto whole = [](HbmRef<const float, 12, 256> x, HbmRef<float, 12, 256> z) {
    emit_pipeline(grid(2), [](VmemRef<const float, 12, 128> xb, VmemRef<float, 12, 128> zb) { zb.store(xb.load()); })(
        in(x, block<12, 128>([](std::int64_t j) {
             return std::array{std::int64_t{0}, j};
           })),
        out(z, block<12, 128>([](std::int64_t j) {
              return std::array{std::int64_t{0}, j};
            })));
  };
  EXPECT_EQ(compile_error(whole, targets::v5e()), "");
}

TEST(TargetTiling, SecondToLastExtentBreaksTheRule) {
  int line = 0;
  const auto k = [&](HbmRef<const float, 96, 128> x, HbmRef<float, 96, 128> z) {
    line = __LINE__ + 1;
    emit_pipeline(grid(8), [](VmemRef<const float, 12, 128> xb, VmemRef<float, 12, 128> zb) { zb.store(xb.load()); })(
        in(x, block<12, 128>(same)), out(z, block<12, 128>(same)));
  };
  const std::string m = compile_error(k, targets::v5e());
  EXPECT_THAT(m, HasSubstr("refx: the Vmem block f32[12,128] of operand 0 breaks the (8, 128) tiling rule of v5e: "
                           "its second-to-last dimension 12 is not a multiple of 8 and not the array's 96"));
  EXPECT_THAT(m, HasSubstr(here(line)));
}

TEST(TargetTiling, LastExtentBreaksTheRule) {
  const auto k = [](HbmRef<const std::int32_t, 8, 256> x, HbmRef<std::int32_t, 8, 256> z) {
    const auto cols = [](std::int64_t j) { return std::array{std::int64_t{0}, j}; };
    emit_pipeline(grid(4), [](VmemRef<const std::int32_t, 8, 64> xb, VmemRef<std::int32_t, 8, 64> zb) {
      zb.store(xb.load());
    })(in(x, block<8, 64>(cols)), out(z, block<8, 64>(cols)));
  };
  EXPECT_THAT(compile_error(k, targets::v6e()),
              HasSubstr("its last dimension 64 is not a multiple of 128 and not the array's 256"));
}

TEST(TargetTiling, RankOneBlocks) {
  const auto one = [](std::int64_t i) { return i; };
  const auto pow2 = [&](HbmRef<const float, 4096> x, HbmRef<float, 4096> z) {
    emit_pipeline(grid(16), [](VmemRef<const float, 256> xb, VmemRef<float, 256> zb) { zb.store(xb.load()); })(
        in(x, block<256>(one)), out(z, block<256>(one)));
  };
  EXPECT_EQ(compile_error(pow2, targets::v5p()), "");
  const auto odd = [&](HbmRef<const float, 4032> x, HbmRef<float, 4032> z) {
    emit_pipeline(grid(42), [](VmemRef<const float, 96> xb, VmemRef<float, 96> zb) { zb.store(xb.load()); })(
        in(x, block<96>(one)), out(z, block<96>(one)));
  };
  EXPECT_THAT(compile_error(odd, targets::v5p()),
              HasSubstr("refx: the rank-1 Vmem block f32[96] of operand 0 breaks the tiling rule of v5p: its extent "
                        "96 is not the array's 4032, not a multiple of 1024 and not a power of 2 of at least 128"));
}

// ---- capacity: the Vmem / Smem live at once.

// A matmul-sized pipeline: two 8 MiB input slots and two 8 MiB output slots
// (32 MiB live) fit v5e's 128 MiB of Vmem and not v4's 16 MiB.
TEST(TargetCapacity, BigBlocksFitV5eWithItsLimitRaisedAndNotV4) {
  int line = 0;
  const auto k = [&](HbmRef<const float, 4096, 1024> x, HbmRef<float, 4096, 1024> z) {
    line = __LINE__ + 1;
    emit_pipeline(grid(2), [](VmemRef<const float, 2048, 1024> xb, VmemRef<float, 2048, 1024> zb) {
      zb.store(xb.load());
    })(in(x, block<2048, 1024>(same)), out(z, block<2048, 1024>(same)));
  };
  const Executable ok = kernel(k).target(targets::v5e()).vmem_limit_bytes(48 << 20).compile(Mesh{{"x", 1}});
  EXPECT_TRUE(ok.target_report().ok());
  EXPECT_EQ(ok.target_report().vmem_peak_bytes, 4 * 2048 * 1024 * 4);
  EXPECT_EQ(ok.target_report().vmem_limit_bytes, 48 << 20);
  const std::string m = compile_error(k, targets::v4());
  EXPECT_THAT(m, HasSubstr("refx: the buffers live at once in vmem need 33554432 bytes (32.0 MiB), more than the "
                           "16777216 bytes (16.0 MiB) of one v4 TensorCore"));
  EXPECT_THAT(m, HasSubstr(here(line)));
}

TEST(TargetCapacity, OnlyScopesLiveAtOnceAddUp) {
  // Two 10 MiB scratch scopes one after the other fit v4's 16 MiB ...
  const auto sequential = [](VmemRef<float, 8, 128> y) {
    run_scoped([&](VmemRef<float, 2560, 1024> a) { y.store(a.at(ds<8>(0), ds<128>(0)).load()); });
    run_scoped([&](VmemRef<float, 2560, 1024> b) { y.store(b.at(ds<8>(0), ds<128>(0)).load()); });
  };
  EXPECT_EQ(compile_error(sequential, targets::v4()), "");
  // ... nested, they are 20 MiB at once.
  int line = 0;
  const auto nested = [&](VmemRef<float, 8, 128> y) {
    run_scoped([&](VmemRef<float, 2560, 1024> a) {
      line = __LINE__ + 1;
      run_scoped([&](VmemRef<float, 2560, 1024> b) {
        y.store(a.at(ds<8>(0), ds<128>(0)).load() + b.at(ds<8>(0), ds<128>(0)).load());
      });
    });
  };
  const std::string m = compile_error(nested, targets::v4());
  EXPECT_THAT(m, HasSubstr("need " + std::to_string(2 * 2560 * 1024 * 4 + 8 * 128 * 4) + " bytes"));
  EXPECT_THAT(m, HasSubstr(here(line)));
}

TEST(TargetCapacity, VmemBuffersArePaddedToWholeTiles) {
  const auto k = [](VmemRef<float, 8, 128> y) {
    run_scoped([&](VmemRef<float, 100, 100> a) {
      a.store(0.0f);
      y.store(0.0f);
    });
  };
  const Executable exe = kernel(k).target(targets::v5e()).compile(Mesh{{"x", 1}});
  // 100 rows pad to 104 (a multiple of 8), 100 lanes to 128; plus the 8x128 operand.
  EXPECT_EQ(exe.target_report().vmem_peak_bytes, (104 * 128 + 8 * 128) * 4);
}

TEST(TargetCapacity, SmemHasItsOwnCapacity) {
  const auto small = [](SmemRef<std::int32_t, 1024> s) { s.store(std::int32_t{0}); };
  EXPECT_EQ(compile_error(small, targets::v5e()), "");
  const auto big = [](SmemRef<std::int32_t, 300000> s) { s.store(std::int32_t{0}); };
  EXPECT_THAT(compile_error(big, targets::v5e()),
              HasSubstr("the buffers live at once in smem need 1200000 bytes (1.1 MiB), more than the 1048576"));
}

// ---- element types.

TEST(TargetElementTypes, F64IsNotATpuType) {
  const auto f32 = [](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) { y.store(x.load() * 2.0f); };
  EXPECT_EQ(compile_error(f32, targets::v5e()), "");
  const auto f64 = [](VmemRef<const double, 8, 128> x, VmemRef<double, 8, 128> y) { y.store(x.load() * 2.0); };
  EXPECT_THAT(compile_error(f64, targets::v5e()),
              HasSubstr("refx: element type f64 is not supported on v5e (operand 0, a vmem Ref f64[8,128])"));
  // A scratch buffer is named by its line, the run_scoped that makes it.
  int line = 0;
  const auto scratch = [&](VmemRef<float, 8, 128> y) {
    line = __LINE__ + 1;
    run_scoped([&](VmemRef<double, 8, 128> s) { y.store(cast<float>(s.load())); });
  };
  const std::string m = compile_error(scratch, targets::v5p());
  EXPECT_THAT(m, HasSubstr("refx: element type f64 is not supported on v5p (a vmem Ref f64[8,128]) (at "));
  EXPECT_THAT(m, HasSubstr(here(line)));
}

TEST(TargetElementTypes, Fp8MatmulOnlyWhereTheMatrixUnitTakesIt) {
  // jax's is_matmul_supported: e5m2 on v5e / v5p / v6e (and e4m3b11fnuz, which refx does not
  // have), e4m3fn and e5m2 on TPU7x; v4's matrix unit takes no fp8.
  const auto e4m3 = [](VmemRef<const f8e4m3fn, 8, 128> a, VmemRef<const f8e4m3fn, 128, 128> b,
                       VmemRef<float, 8, 128> c) { c.store(dot<float>(a.load(), b.load())); };
  const auto e5m2 = [](VmemRef<const f8e5m2, 8, 128> a, VmemRef<const f8e5m2, 128, 128> b,
                       VmemRef<float, 8, 128> c) { c.store(dot<float>(a.load(), b.load())); };
  EXPECT_EQ(compile_error(e4m3, targets::tpu7x(), Mesh{{"x", 2}}), "");
  EXPECT_THAT(compile_error(e4m3, targets::v6e()),
              HasSubstr("refx: dot operand 0 of type f8e4m3fn is not taken by the matrix unit of v6e"));
  EXPECT_THAT(compile_error(e4m3, targets::v5e()), HasSubstr("refx: element type f8e4m3fn is not supported on v5e"));
  for (const Target* t : {&targets::v5e(), &targets::v5p(), &targets::v6e()})
    EXPECT_EQ(compile_error(e5m2, *t), "") << t->name;
  EXPECT_EQ(compile_error(e5m2, targets::tpu7x(), Mesh{{"x", 2}}), "");
  EXPECT_THAT(compile_error(e5m2, targets::v4()), HasSubstr("refx: element type f8e5m2 is not supported on v4"));
}

TEST(TargetElementTypes, DotOperandTypeTheMatrixUnitDoesNotTake) {
  int line = 0;
  const auto k = [&](VmemRef<const std::int32_t, 8, 128> a, VmemRef<const std::int32_t, 128, 128> b,
                     VmemRef<std::int32_t, 8, 128> c) {
    line = __LINE__ + 1;
    c.store(dot(a.load(), b.load()));
  };
  const std::string m = compile_error(k, targets::v5e());
  EXPECT_THAT(m, HasSubstr("refx: dot operand 0 of type i32 is not taken by the matrix unit of v5e"));
  EXPECT_THAT(m, HasSubstr(here(line)));
  const auto i8 = [](VmemRef<const std::int8_t, 8, 128> a, VmemRef<const std::int8_t, 128, 128> b,
                     VmemRef<std::int32_t, 8, 128> c) { c.store(dot<std::int32_t>(a.load(), b.load())); };
  EXPECT_EQ(compile_error(i8, targets::v5e()), "");
}

// ---- the mesh against the torus.

const auto copy_kernel = [](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) { y.store(x.load()); };

TEST(TargetMesh, MeshesThatFitTheLargestSlice) {
  EXPECT_EQ(compile_error(copy_kernel, targets::v5e(), Mesh{{"x", 16}, {"y", 16}}), "");
  EXPECT_EQ(compile_error(copy_kernel, targets::v5e(), Mesh{{"x", 64}}), "");  // spans both torus axes
  EXPECT_EQ(compile_error(copy_kernel, targets::v5p(), Mesh{{"x", 4}, {"y", 4}, {"z", 4}}), "");
}

TEST(TargetMesh, MoreDevicesThanTheLargestSlice) {
  EXPECT_THAT(compile_error(copy_kernel, targets::v5e(), Mesh{{"x", 2}, {"y", 256}}),
              HasSubstr("refx: the mesh {x=2, y=256} has 512 devices, more than the 256 of the largest v5e slice "
                        "(16x16 chips)"));
}

TEST(TargetMesh, AxesThatDoNotLayOutOnTheTorus) {
  EXPECT_THAT(compile_error(copy_kernel, targets::v5e(), Mesh{{"x", 17}}),
              HasSubstr("refx: the mesh {x=17} does not lay out on the 16x16 torus of v5e"));
  // 7 x 7 x 5 = 245 chips would fit 256, but no axis takes the 5 beside a 7.
  EXPECT_THAT(compile_error(copy_kernel, targets::v6e(), Mesh{{"a", 7}, {"b", 7}, {"c", 5}}),
              HasSubstr("does not lay out"));
}

// ---- warn mode and reports.

TEST(TargetWarn, CollectsEveryViolationAndCompiles) {
  const auto k = [](HbmRef<const float, 96, 128> x, HbmRef<float, 96, 128> z) {
    run_scoped([&](VmemRef<double, 8, 128> scratch) { scratch.store(0.0); });
    emit_pipeline(grid(8), [](VmemRef<const float, 12, 128> xb, VmemRef<float, 12, 128> zb) { zb.store(xb.load()); })(
        in(x, block<12, 128>(same)), out(z, block<12, 128>(same)));
  };
  const Executable exe = kernel(k).target(targets::v5e(), TargetMode::warn).compile(Mesh{{"x", 17}});
  const TargetReport& r = exe.target_report();
  EXPECT_EQ(r.target, "v5e");
  ASSERT_EQ(r.violations.size(), 4u);  // the mesh, f64, and the two pipeline blocks (in and out)
  EXPECT_EQ(r.violations[0].rule, TargetViolation::Rule::mesh);
  EXPECT_EQ(r.violations[1].rule, TargetViolation::Rule::element_type);
  EXPECT_EQ(r.violations[2].rule, TargetViolation::Rule::tiling);
  EXPECT_EQ(r.violations[3].rule, TargetViolation::Rule::tiling);
  EXPECT_THAT(r.violations[3].message, HasSubstr("of operand 1"));
  const std::string printed = r.to_string();
  for (const TargetViolation& v : r.violations) EXPECT_THAT(printed, HasSubstr(v.message));
  EXPECT_THAT(printed, HasSubstr("v5e: 4 violation(s)"));
}

TEST(TargetWarn, NoTargetNoReport) {
  const Executable exe = kernel(copy_kernel).compile(Mesh{{"x", 1}});
  EXPECT_TRUE(exe.target_report().target.empty());
  EXPECT_EQ(exe.target_report().to_string(), "");
}

// ---- a target the user describes.

TEST(TargetUserDescribed, ASmallChipWithItsOwnFigures) {
  // [snippet:user-target]
  Target tiny = targets::v5e();  // start from a shipped generation
  tiny.name = "tiny";
  tiny.vmem_bytes = 64 * 1024;                 // 64 KiB of Vmem per TensorCore,
  tiny.scoped_vmem_bytes = 0;                  // all of it for a kernel
  tiny.ici = IciTopology{{4}, 4, 10e9, 1e-6};  // a ring of 4 chips, 10 GB/s links, 1 us per hop
  // [/snippet]
  const auto fits = [](VmemRef<float, 64, 128> y) { y.store(1.0f); };  // 32 KiB
  EXPECT_EQ(compile_error(fits, tiny, Mesh{{"x", 4}}), "");
  const auto spills = [](VmemRef<float, 256, 128> y) { y.store(1.0f); };  // 128 KiB
  EXPECT_THAT(compile_error(spills, tiny), HasSubstr("more than the 65536 bytes (64.0 KiB) of one tiny TensorCore"));
  EXPECT_THAT(compile_error(fits, tiny, Mesh{{"x", 8}}), HasSubstr("more than the 4 of the largest tiny slice"));
}

}  // namespace
