// Misuse: expand_dims of a Ref (m_ref[:, None] ported without the read).
// refx-expect: refx: expand_dims takes a Value, not a Ref; read the Ref first: expand_dims<axis>(x.load())
#include <refx/refx.hpp>

using namespace refx;

void subtract_row_max() {
  trace([](VmemRef<const float, 8, 128> s, VmemRef<const float, 8> m, VmemRef<float, 8, 128> p) {
    p.store(exp(s.load() - expand_dims<1>(m)));
  });
}
