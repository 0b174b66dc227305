// Bad input at every public entry: meshes, Arrays, calls, compilation and
// tracing, device ids at run time, the extension API and the interpreter.
// Each case must raise a clear error -- a refx::Error (the slice and shape
// helpers throw its refx::ArgumentError) whose message starts with "refx:" and names what was wrong -- and leave
// nothing corrupted: after each one, a kernel on the same runtime still computes the right result. One-device meshes
// and zero-sized arrays are valid input and must work. docs/diagnostics.md ("Bad input at the public entry points")
// lists every case with its test and message.

#include <gtest/gtest.h>

#include <refx/collectives.hpp>
#include <refx/extend.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/ir/interpret.hpp>

#include "reliability/reliability_testing.hpp"
#include "support/collectives_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 64;
using In = HbmRef<const float, kBlock>;
using Out = HbmRef<float, kBlock>;

/// A right permute with a handshake on 4 devices: the probe that the runtime
/// still works after each bad input.
const Executable& probe_kernel() {
  static const Executable exe = kernel([](In x, Out y) {
                                  const auto me = axis_index("x");
                                  const auto right = (me + 1) % 4, left = (me + 3) % 4;
                                  run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                                    semaphore_signal(ready, 1, left);
                                    semaphore_wait(ready, 1);
                                    const auto c = make_async_remote_copy(x, y, send, recv, right);
                                    c.start();
                                    c.wait();
                                  });
                                })
                                    .name("probe")
                                    .compile(Mesh{{"x", 4}});
  return exe;
}

Array tagged(int n, Runtime& rt = Runtime::global()) { return Array::generate<float>(n, Shape{kBlock}, tag, rt); }

/// The runtime still runs kernels correctly.
void expect_runtime_intact() {
  const Array y = probe_kernel()(tagged(4))[0];
  EXPECT_TRUE(all_shards_match<float>(y, [](int d, std::int64_t i) { return tag(mod(d - 1, 4), i); }))
      << "the runtime is not intact after the bad input";
}

/// `f` must throw an E whose message starts with "refx:" and contains every
/// needle; then the runtime must still work. Counts the case.
template <class E = Error, class F>
void expect_rejected(F&& f, std::initializer_list<std::string> needles) {
  Watchdog dog(kTestLimit, ::testing::UnitTest::GetInstance()->current_test_info()->name());
  const Thrown t = thrown<E>(std::forward<F>(f));
  EXPECT_TRUE(has_all(t, needles));
  EXPECT_EQ(t.message.rfind("refx:", 0), 0u) << "the message does not start with \"refx:\": " << t.message;
  expect_runtime_intact();
  report(1, "bad inputs tried (each a clear refx error; the runtime intact afterwards)");
}

/// Runs `exe` on `x` and returns what waiting for its output raised.
void run_and_wait(const Executable& exe, const Array& x) { exe(x)[0].block_until_ready(); }

// ---------------------------------------------------------------- meshes

TEST(BadInput, MeshWithoutAxes) {
  expect_rejected([] { (void)Mesh(std::vector<Mesh::Axis>{}); }, {"refx: a Mesh needs at least one axis"});
}
TEST(BadInput, MeshAxisOfSizeZero) {
  expect_rejected([] { (void)Mesh{{"x", 0}}; }, {"refx: mesh axis \"x\" has size 0; sizes must be >= 1"});
}
TEST(BadInput, MeshAxisOfNegativeSize) {
  expect_rejected([] { (void)Mesh{{"y", 2}, {"x", -3}}; }, {"mesh axis \"x\" has size -3"});
}
TEST(BadInput, MeshAxisNamedTwice) {
  expect_rejected([] { (void)Mesh{{"x", 2}, {"x", 2}}; }, {"refx: mesh axis \"x\" appears twice"});
}
TEST(BadInput, MeshAxisWithoutAName) {
  expect_rejected([] { (void)Mesh{{"", 2}}; }, {"refx: mesh axes need names"});
}
TEST(BadInput, MeshWithMoreDevicesThanIdsCanNumber) {
  expect_rejected(
      [] {
        (void)Mesh{{"y", 65536}, {"x", 65536}};
      },
      {"refx: the mesh {y=65536, x=65536} has more than 2147483647 devices"});
}
TEST(BadInput, MeshWithMoreCoresThanTheRuntimeRuns) {
  expect_rejected(
      [] {
        (void)Mesh{{"x", 2}}.with_cores(Mesh::max_cores + 1);
      },
      {"refx: Mesh::with_cores(17): a device has 1 to 16 cores"});
}
TEST(BadInput, MeshWithZeroCores) {
  expect_rejected(
      [] {
        (void)Mesh{{"x", 2}}.with_cores(0);
      },
      {"refx: Mesh::with_cores(0): a device has 1 to 16 cores"});
}
TEST(BadInput, MeshWithMoreLanesThanIdsCanNumber) {
  expect_rejected(
      [] {
        (void)Mesh{{"y", 65536}, {"x", 16384}}.with_cores(2);
      },
      {"refx: the mesh {y=65536, x=16384} with 2 cores per device has more than 2147483647 lanes"});
}
TEST(BadInput, MeshAxisNamedLikeTheCores) {
  expect_rejected([] { (void)Mesh{{"refx.core", 2}}; }, {"refx: \"refx.core\" is reserved for the cores of a device"});
}
TEST(BadInput, MeshLookupOfAnUnknownAxis) {
  expect_rejected([] { (void)Mesh{{"x", 4}}.axis("y"); }, {"refx: the mesh has no axis \"y\" (its axes: {x=4})"});
}

// ---------------------------------------------------------------- Arrays

TEST(BadInput, ArrayWithZeroDevices) {
  expect_rejected([] { (void)Array::empty(0, DType::f32, Shape{4}); },
                  {"refx: an Array needs at least one device, got 0"});
}
TEST(BadInput, ArrayWithANegativeDeviceCount) {
  expect_rejected([] { (void)Array::generate<float>(-2, Shape{4}, tag); },
                  {"an Array needs at least one device, got -2"});
}
TEST(BadInput, ArrayWithANegativeExtent) {
  expect_rejected(
      [] {
        (void)Array::empty(2, DType::f32, Shape{4, -3});
      },
      {"refx: an Array's shard of shape [4,-3] has a negative extent"});
}
TEST(BadInput, ArrayWithMoreElementsThanCanBeAddressed) {
  expect_rejected(
      [] {
        (void)Array::empty(2, DType::f32, Shape{std::int64_t{1} << 40, std::int64_t{1} << 40});
      },
      {"refx: an Array's shard of shape [1099511627776,1099511627776] has too many elements to address"});
}
TEST(BadInput, ArrayLargerThanMemory) {
  if (kSanitized)
    GTEST_SKIP() << "the sanitizers' operator new reports a failed allocation and aborts (allocator_may_return_null "
                    "applies to malloc only)";
  expect_rejected([] { (void)Array::empty(2, DType::f32, Shape{std::int64_t{1} << 45}); },
                  {"refx: out of memory: a buffer of f32[35184372088832] needs 140737488355328 bytes"});
}
TEST(BadInput, ArrayFromShardsOfTheWrongSize) {
  expect_rejected(
      [] {
        (void)Array::from_shards(std::vector<std::vector<float>>{{1, 2, 3, 4}, {1, 2, 3}}, Shape{2, 2});
      },
      {"refx: Array::from_shards: shard 1 has 3 elements but the shape [2,2] needs 4"});
}
TEST(BadInput, ToHostWithTheWrongElementType) {
  const Array x = tagged(2);
  expect_rejected([&] { (void)x.to_host<std::int32_t>(0); }, {"refx: to_vector<i32> on a f32 buffer"});
}
TEST(BadInput, ToHostOfADeviceBeyondTheArray) {
  const Array x = tagged(2);
  expect_rejected([&] { (void)x.to_host<float>(2); }, {"refx: device 2 is outside this Array, which has 2 devices"});
}
TEST(BadInput, ToHostOfANegativeDevice) {
  const Array x = tagged(2);
  expect_rejected([&] { (void)x.to_host<float>(-1); }, {"refx: device -1 is outside this Array, which has 2 devices"});
}
TEST(BadInput, UseOfAnEmptyArray) {
  expect_rejected([] { (void)Array{}.num_devices(); }, {"refx: this Array is empty (default-constructed)"});
}

// ---------------------------------------------------------------- calls

const Executable& copier() {
  static const Executable exe = kernel([](In x, Out y) { sync_copy(x, y); }).name("copier").compile(Mesh{{"x", 4}});
  return exe;
}
const Executable& two_outputs() {
  static const Executable exe = kernel([](Out x, Out y) {
                                  run_scoped([&](VmemRef<float, kBlock> t) {
                                    t.store(full<float, kBlock>(1.0f));
                                    sync_copy(t, x);
                                    sync_copy(t, y);
                                  });
                                })
                                    .name("two_outputs")
                                    .compile(Mesh{{"x", 4}});
  return exe;
}

TEST(BadInput, CallWithTooFewInputs) {
  expect_rejected([] { (void)copier()(std::vector<Array>{}); },
                  {"refx: kernel 'copier' takes 1 input Arrays (its read-only Ref parameters), 0 given"});
}
TEST(BadInput, CallWithTooManyInputs) {
  expect_rejected([] { (void)copier()(tagged(4), tagged(4)); }, {"kernel 'copier' takes 1 input Arrays", "2 given"});
}
TEST(BadInput, CallWithAWrongShape) {
  expect_rejected([] { (void)copier()(Array::generate<float>(4, Shape{8}, tag)); },
                  {"refx: kernel 'copier': argument 0 is f32[8] per device but the kernel expects f32[64]"});
}
TEST(BadInput, CallWithAWrongElementType) {
  expect_rejected([] { (void)copier()(Array::generate<std::int32_t>(4, Shape{kBlock}, tag)); },
                  {"refx: kernel 'copier': argument 0 is i32[64] per device but the kernel expects f32[64]"});
}
TEST(BadInput, CallWithAnArrayOfAnotherDeviceCount) {
  expect_rejected([] { (void)copier()(tagged(3)); },
                  {"refx: kernel 'copier': argument 0 has 3 shards but the mesh {x=4} has 4 devices"});
}
TEST(BadInput, CallWithAnEmptyArray) {
  expect_rejected([] { (void)copier()(Array{}); }, {"refx: kernel 'copier': argument 0 is an empty Array"});
}
TEST(BadInput, CallInPlaceWithTheWrongArgumentCount) {
  expect_rejected([] { two_outputs().call_in_place({tagged(4)}); },
                  {"refx: kernel 'two_outputs' has 2 parameters, call_in_place got 1 Arrays"});
}
TEST(BadInput, CallInPlaceWithOneArrayTwice) {
  const Array x = tagged(4);
  expect_rejected(
      [&] {
        two_outputs().call_in_place({x, x});
      },
      {"refx: kernel 'two_outputs': the same Array is passed as arguments 0 and 1, and one of them is written"});
}
TEST(BadInput, CallWithAnInputFromAFailedCall) {
  const Executable failing = kernel([](In x, Out y) {
                               sync_copy(x, y);
                               run_scoped([&](RegularSemaphore s) { semaphore_signal(s, 1); });
                             })
                                 .name("failing")
                                 .passes(unverified())
                                 .compile(Mesh{{"x", 4}});
  const Array bad = failing(tagged(4))[0];
  expect_rejected<RuntimeError>([&] { run_and_wait(copier(), bad); },
                                {"refx: kernel 'copier': input 0 comes from a call that failed",
                                 "kernel 'failing' ended with semaphores not back to 0"});
}

// ---------------------------------------------------------------- compilation and tracing

using DynVec = Ref<float, extents<dyn>, Hbm>;
using DynIn = Ref<const float, extents<dyn>, Hbm>;

TEST(BadInput, CompileWithTheWrongNumberOfShapes) {
  expect_rejected<TraceError>(
      [] {
        (void)kernel([](DynIn x, DynVec y) { sync_copy(x, y); }).compile(Mesh{{"x", 2}}, {Shape{8}});
      },
      {"refx: 1 shapes given for 2 parameters"});
}
TEST(BadInput, CompileWithoutTheShapesOfDynamicExtents) {
  expect_rejected<TraceError>(
      [] {
        (void)kernel([](DynIn x, DynVec y) { sync_copy(x, y); }).compile(Mesh{{"x", 2}});
      },
      {"refx: parameter 0 has dynamic extents; pass its shape"});
}
TEST(BadInput, CompileWithAShapeAgainstTheStaticExtents) {
  expect_rejected<TraceError>(
      [] {
        (void)kernel([](In x, Out y) { sync_copy(x, y); }).compile(Mesh{{"x", 2}}, {Shape{8}, Shape{kBlock}});
      },
      {"refx: shape [8] given for parameter 0 does not match its static extents"});
}
TEST(BadInput, CompileWithANegativeShape) {
  expect_rejected<TraceError>(
      [] {
        (void)kernel([](DynIn x, DynVec y) { sync_copy(x, y); }).compile(Mesh{{"x", 2}}, {Shape{-4}, Shape{-4}});
      },
      {"refx: shape [-4] given for parameter 0 has a negative extent"});
}
TEST(BadInput, CollectiveProgramOfNegativeSize) {
  expect_rejected<TraceError>(
      [] {
        (void)collectives::all_reduce_program<float>(Mesh{{"x", 4}}, -5);
      },
      {"refx: shape [-5] given for parameter 0 has a negative extent"});
}
TEST(BadInput, CollectiveProgramOverAnUnknownAxis) {
  expect_rejected<TraceError>(
      [] {
        (void)collectives::all_reduce_program<float>(Mesh{{"x", 4}}, 8, {.axis = "y"});
      },
      {"refx: the mesh {x=4} has no axis \"y\""});
}
TEST(BadInput, AxisIndexOfAnUnknownAxis) {
  expect_rejected<TraceError>(
      [] {
        (void)kernel([](In x, Out y) {
          sync_copy(x, y);
          (void)axis_index("z");
        }).compile(Mesh{{"x", 2}});
      },
      {"refx: the mesh {x=2} has no axis \"z\""});
}
/// Compiles for `mesh` a kernel that copies x into y on the device `target()`
/// names (called while tracing: its coordinates are traced).
template <class Target>
void compile_copy_to(const Mesh& mesh, Target target) {
  (void)kernel([&](In x, Out y) {
    run_scoped([&](DmaSemaphore s, DmaSemaphore r) {
      const auto c = make_async_remote_copy(x, y, s, r, target());
      c.start();
      c.wait();
    });
  }).compile(mesh);
}
TEST(BadInput, MeshDeviceIdWithTooManyCoordinates) {
  expect_rejected<TraceError>(
      [] {
        compile_copy_to(Mesh{{"x", 2}}, [] { return DeviceId::mesh({0, 1}); });
      },
      {"refx: the device id has 2 coordinates but the mesh {x=2} has 1 axes"});
}
// Without the check, (0, 5) on {y=2, x=4} would be the flat id 5: device (1, 1).
TEST(BadInput, MeshDeviceIdCoordinateOutsideItsAxis) {
  expect_rejected<TraceError>(
      [] {
        compile_copy_to(Mesh{{"y", 2}, {"x", 4}}, [] { return DeviceId::mesh({0, 5}); });
      },
      {"refx: the device id's coordinate 5 on axis \"x\" is outside that axis (size 4) of the mesh {y=2, x=4}",
       "bad_input_test.cpp:"});
}
TEST(BadInput, NamedDeviceIdCoordinateOutsideItsAxis) {
  expect_rejected<TraceError>(
      [] {
        compile_copy_to(Mesh{{"x", 4}}, [] { return DeviceId::named({{"x", -1}}); });
      },
      {"refx: the device id's coordinate -1 on axis \"x\" is outside that axis (size 4) of the mesh {x=4}"});
}
// An int64 stored into int32 elements would silently keep its low 32 bits.
TEST(BadInput, IntegerStoredIntoNarrowerElements) {
  expect_rejected<TraceError>(
      [] {
        (void)kernel([](VmemRef<const std::int32_t, 4>, VmemRef<std::int32_t, 4> y) {
          y.store((std::int64_t{1} << 33) + 7);
        }).compile(Mesh{{"x", 1}});
      },
      {"refx: the integer 8589934599 does not fit the i32 elements of the Ref it is stored into: it would become 7 "
       "(at ",
       "bad_input_test.cpp:"});
}
TEST(BadInput, BarrierSemaphoreWithoutACollectiveId) {
  expect_rejected<TraceError>(
      [] {
        (void)kernel([](In x, Out y) {
          sync_copy(x, y);
          semaphore_signal(get_barrier_semaphore(), 1);
        }).compile(Mesh{{"x", 2}});
      },
      {"refx: get_barrier_semaphore needs a collective id"});
}
TEST(BadInput, StaticIndexOutOfBounds) {
  expect_rejected<TraceError>([] { (void)trace([](VmemRef<float, 4, 8> y) { y.at(4, all).store(0.0f); }); },
                              {"refx: .at(...): index 4 (covering 4..4) is out of bounds for dimension 0 of size 4"});
}
TEST(BadInput, SliceOfNegativeSize) {
  expect_rejected<ArgumentError>([] { (void)ds(0, -1); }, {"refx: ds size must be >= 0"});
}
TEST(BadInput, SliceOfZeroStride) {
  expect_rejected<ArgumentError>([] { (void)ds(0, 2, 0); }, {"refx: ds stride must be >= 1"});
}
TEST(BadInput, ShapeOfRankSeven) {
  expect_rejected<ArgumentError>([] { (void)Shape{1, 1, 1, 1, 1, 1, 1}; },
                                 {"refx: at most 6 dimensions are supported"});
}

// ---------------------------------------------------------------- device ids and indices at run time

TEST(BadInput, RemoteCopyToADeviceBeyondTheMesh) {
  const Executable exe = kernel([](In x, Out y) {
                           run_scoped([&](DmaSemaphore s, DmaSemaphore r) {
                             const auto c = make_async_remote_copy(x, y, s, r, axis_index("x") + 1);
                             c.start();
                             c.wait();
                           });
                         }).compile(Mesh{{"x", 4}});
  expect_rejected<RuntimeError>([&] { run_and_wait(exe, tagged(4)); },
                                {"refx: device 3:", "copy to device 4 but the mesh has 4 devices"});
}
TEST(BadInput, RemoteCopyToANegativeDevice) {
  const Executable exe = kernel([](In x, Out y) {
                           run_scoped([&](DmaSemaphore s, DmaSemaphore r) {
                             const auto c = make_async_remote_copy(x, y, s, r, axis_index("x") - 1);
                             c.start();
                             c.wait();
                           });
                         }).compile(Mesh{{"x", 4}});
  expect_rejected<RuntimeError>([&] { run_and_wait(exe, tagged(4)); },
                                {"refx: device 0:", "copy to device -1 but the mesh has 4 devices"});
}
TEST(BadInput, SignalToADeviceBeyondTheMesh) {
  const Executable exe = kernel([](In x, Out y) {
                           sync_copy(x, y);
                           run_scoped([&](RegularSemaphore s) {
                             semaphore_signal(s, 1, axis_index("x") * 2);
                             semaphore_wait(s, 1);
                           });
                         })
                             .passes(unverified())
                             .compile(Mesh{{"x", 4}});
  expect_rejected<RuntimeError>([&] { run_and_wait(exe, tagged(4)); },
                                {"semaphore_signal to device", "but the mesh has 4 devices"});
}
TEST(BadInput, DynamicIndexOutOfBounds) {
  const Executable exe = kernel([](VmemRef<const float, kBlock> x, VmemRef<float, kBlock> y) {
                           y.store(x.load());
                           y.at(ds(axis_index("x") * 20, 8)).store(0.0f);
                         }).compile(Mesh{{"x", 4}});
  expect_rejected<RuntimeError>(
      [&] { run_and_wait(exe, Array::generate<float>(4, Shape{kBlock}, tag)); },
      {"refx: device 3: index 60 (covering 60..67) is out of bounds for dimension 0 of size 64"});
}
TEST(BadInput, WaitThatNobodySignals) {
  const Executable exe = kernel([](In x, Out y) {
                           sync_copy(x, y);
                           run_scoped([&](RegularSemaphore never) { semaphore_wait(never, 1); });
                         })
                             .name("stuck")
                             .passes(unverified())
                             .compile(Mesh{{"x", 4}});
  expect_rejected<RuntimeError>([&] { run_and_wait(exe, tagged(4)); },
                                {"refx: deadlock in kernel 'stuck' on mesh {x=4}: no device can make progress"});
}

// ---------------------------------------------------------------- the extension API

TEST(BadInput, BindWithoutTheOperandsAPrimitiveNeeds) {
  expect_rejected<TraceError>([] { (void)trace([](VmemRef<float, 8> x) { extend::bind_effect(prim::dma_start, x); }); },
                              {"refx: dma_start: takes three attributes (descriptor, reduce, remote), got 0"});
}
TEST(BadInput, BindWithTooFewAttributes) {
  expect_rejected<TraceError>(
      [] {
        (void)trace([](VmemRef<float, 8> x) {
          x.store(extend::bind<float, extents<8>>(prim::iota, extend::Attrs{3, 0}));
        });
      },
      {"refx: iota: expects at least 3 attributes, got 2"});
}
TEST(BadInput, BindWithAnAttributeThatIsNoElementType) {
  expect_rejected<TraceError>(
      [] { (void)trace([](VmemRef<float, 8>) {
             (void)extend::bind<float>(prim::constant, extend::Attrs{99, 0});
           }); },
      {"refx: constant: attribute 0 is 99, which is not an element type"});
}
TEST(BadInput, BindWithANegativeExtentAttribute) {
  expect_rejected<TraceError>(
      [] {
        (void)trace([](VmemRef<float, 8>) {
          (void)extend::bind<float, extents<dyn>>(prim::broadcast, Scalar<float>(1.0f), extend::Attrs{1, -4});
        });
      },
      {"refx: broadcast: extent 0 of the shape in its attributes is -4; extents must be >= 0"});
}
TEST(BadInput, BindAnIndexCheckOfAFloat) {
  expect_rejected<TraceError>(
      [] {
        (void)trace([](VmemRef<float, 8>) {
          (void)extend::bind<float>(prim::index_check, Scalar<float>(1.0f), extend::Attrs{0, 1, 1, 4});
        });
      },
      {"refx: index_check: takes an integer scalar start"});
}
TEST(BadInput, BindAnIndexCheckWithTooFewAttributes) {
  expect_rejected<TraceError>(
      [] {
        (void)trace([](VmemRef<float, 8>) {
          (void)extend::bind<std::int32_t>(prim::index_check, Scalar<std::int32_t>(1), extend::Attrs{0});
        });
      },
      {"refx: index_check: takes four attributes (dim, size, stride, parent size), got 1"});
}
TEST(BadInput, DefineAPrimitiveWithATakenName) {
  expect_rejected([] { (void)define_primitive(Primitive{.name = "add"}); },
                  {"refx: a primitive named 'add' is already defined"});
}

// ---------------------------------------------------------------- the reference interpreter

TEST(BadInput, InterpretWithTheWrongArgumentCount) {
  const Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { y.store(x.load()); });
  Buffer a(DType::f32, Shape{8});
  expect_rejected([&] { interpret(g, a); }, {"refx: interpret: the kernel takes 2 arguments, 1 given"});
}
TEST(BadInput, InterpretWithOneBufferTwice) {
  const Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { y.store(x.load()); });
  Buffer a(DType::f32, Shape{8});
  expect_rejected([&] { interpret(g, a, a); }, {"refx: interpret: the same buffer is passed as arguments 0 and 1"});
}
TEST(BadInput, InterpretWithAWrongBufferShape) {
  const Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { y.store(x.load()); });
  Buffer a(DType::f32, Shape{4}), b(DType::f32, Shape{8});
  expect_rejected([&] { interpret(g, a, b); }, {"refx: kernel argument 0 is f32[4] but the kernel expects f32[8]"});
}

// ---------------------------------------------------------------- edge cases that are valid input

/// Every collective program on a one-device mesh is the identity (or a copy).
TEST(BadInput, OneDeviceMeshesRunEveryCollective) {
  Watchdog dog(kTestLimit, "one-device collectives");
  const Mesh one{{"x", 1}};
  const std::int64_t m = 37;
  const auto host = inputs<float>(1, m);
  const Array x = array_of(host, Shape{m});
  EXPECT_TRUE(matches(collectives::all_reduce_program<float>(one, m)(x)[0].to_host<float>(0), host[0], "all_reduce"));
  EXPECT_TRUE(
      matches(collectives::reduce_scatter_program<float>(one, m)(x)[0].to_host<float>(0), host[0], "reduce_scatter"));
  EXPECT_TRUE(matches(collectives::all_gather_program<float>(one, m)(x)[0].to_host<float>(0), host[0], "all_gather"));
  const Array x2 = Array::from_shards<float>(host, Shape{1, m});
  EXPECT_TRUE(matches(collectives::all_to_all_program<float>(one, m)(x2)[0].to_host<float>(0), host[0], "all_to_all"));
  // A remote copy to oneself, with the handshake of the probe kernel.
  const Executable self = kernel([](In x, Out y) {
                            run_scoped([&](RegularSemaphore ready, DmaSemaphore s, DmaSemaphore r) {
                              semaphore_signal(ready, 1, axis_index("x"));
                              semaphore_wait(ready, 1);
                              const auto c = make_async_remote_copy(x, y, s, r, (axis_index("x") + 1) % axis_size("x"));
                              c.start();
                              c.wait();
                            });
                          }).compile(one);
  EXPECT_TRUE(all_shards_match<float>(self(tagged(1))[0], [](int, std::int64_t i) { return tag(0, i); }));
  expect_runtime_intact();
  report(1, "edge-case inputs accepted (one-device meshes, zero sizes)");
}

/// Zero-sized Arrays go through every collective program and come back empty.
TEST(BadInput, ZeroSizedArraysRunEveryCollective) {
  Watchdog dog(kTestLimit, "zero-sized collectives");
  const Mesh four{{"x", 4}};
  const Array x = Array::generate<float>(4, Shape{0}, tag);
  EXPECT_EQ(collectives::all_reduce_program<float>(four, 0)(x)[0].to_host<float>(3).size(), 0u);
  EXPECT_EQ(collectives::reduce_scatter_program<float>(four, 0)(x)[0].to_host<float>(3).size(), 0u);
  EXPECT_EQ(collectives::all_gather_program<float>(four, 0)(x)[0].to_host<float>(3).size(), 0u);
  EXPECT_EQ(collectives::all_to_all_program<float>(four, 0)(Array::generate<float>(4, Shape{4, 0}, tag))[0]
                .to_host<float>(3)
                .size(),
            0u);
  expect_runtime_intact();
  report(1, "edge-case inputs accepted (one-device meshes, zero sizes)");
}

}  // namespace
