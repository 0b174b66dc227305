// Positive control (of a negative property): the only conversion between
// access modes is the widening Ref<T> -> Ref<const T>. The narrowing
// Ref<const T> -> Ref<T> does not exist, neither implicitly nor explicitly,
// and Refs do not convert across element types, extents or memory spaces.
#include <cstdint>
#include <type_traits>

#include <refx/refx.hpp>

using namespace refx;

// Widening exists.
static_assert(std::is_convertible_v<Ref<float, extents<8, 128>>, Ref<const float, extents<8, 128>>>);
static_assert(std::is_convertible_v<Ref<std::int32_t, extents<>, Smem>, Ref<const std::int32_t, extents<>, Smem>>);

// Narrowing does not: not implicitly, not with a cast.
static_assert(!std::is_convertible_v<Ref<const float, extents<8, 128>>, Ref<float, extents<8, 128>>>);
static_assert(!std::is_constructible_v<Ref<float, extents<8, 128>>, Ref<const float, extents<8, 128>>>);
static_assert(!std::is_convertible_v<Ref<const float, extents<>, Smem>, Ref<float, extents<>, Smem>>);
static_assert(!std::is_convertible_v<Ref<const float, extents<4>, Hbm>, Ref<float, extents<4>, Hbm>>);

// No conversion across element types, extents or memory spaces.
static_assert(!std::is_convertible_v<Ref<float, extents<8>>, Ref<double, extents<8>>>);
static_assert(!std::is_convertible_v<Ref<float, extents<8>>, Ref<const double, extents<8>>>);
static_assert(!std::is_convertible_v<Ref<float, extents<8>>, Ref<float, extents<4>>>);
static_assert(!std::is_convertible_v<Ref<float, extents<8>>, Ref<float, extents<dyn>>>);
static_assert(!std::is_convertible_v<Ref<float, extents<8>, Hbm>, Ref<float, extents<8>, Vmem>>);
static_assert(!std::is_convertible_v<Ref<float, extents<8>, Vmem>, Ref<const float, extents<8>, Smem>>);

// A Value is not a Ref and a Ref is not a Value.
static_assert(!std::is_convertible_v<Value<float, extents<8>>, Ref<const float, extents<8>>>);
static_assert(!std::is_convertible_v<Ref<const float, extents<8>>, Value<float, extents<8>>>);

// Access mode is visible in the type.
static_assert(Ref<const float, extents<8>>::read_only);
static_assert(!Ref<float, extents<8>>::read_only);
static_assert(std::is_same_v<Ref<const float, extents<8>>::value_type, float>);

// So a read-only Ref cannot be handed to a helper that writes.
inline void writes(Ref<float, extents<8>> r) { r.store(0.0f); }
template <class R>
concept can_pass_to_writer = requires(R r) { writes(r); };
static_assert(can_pass_to_writer<Ref<float, extents<8>>>);
static_assert(!can_pass_to_writer<Ref<const float, extents<8>>>);
