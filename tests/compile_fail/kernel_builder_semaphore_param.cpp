// Misuse: a semaphore as a parameter of a kernel built with refx::kernel
// (kernel parameters are the input and output Refs; semaphores come from
// run_scoped inside the kernel).
// refx-expect: refx: kernel parameters are Refs (inputs: Ref<const T>, outputs: Ref<T>); allocate scratch and semaphores with run_scoped inside the kernel
#include <refx/kernel.hpp>
#include <refx/refx.hpp>

using namespace refx;

void build() {
  auto exe = kernel([](HbmRef<const float, 128> x, HbmRef<float, 128> y, DmaSemaphore sem) {
               auto c = make_async_copy(x, y, sem);
               c.start();
               c.wait();
             }).compile(Mesh{{"x", 2}});
  (void)exe;
}
