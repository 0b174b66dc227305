// Built against an installed refx by the consumer.installed_package test,
// linking refx::mpi: its one object (the MPI transport, compiled when refx was
// built) must be in the program and have registered MPI as Runtime::global()'s
// transport before main. Outside mpirun the program still runs in-process.
// REFX_IMPLEMENTATION: refx's definitions, when refx::compiled is not linked
// (ignored when it is).
#define REFX_IMPLEMENTATION
#include <refx/refx.hpp>
#include <refx/transport/transport.hpp>

#include <cstdio>

int main() {
  const bool registered = refx::transport::default_remote().load() != nullptr;
  std::printf("refx %s; MPI transport %s\n", refx::version_string, registered ? "registered" : "missing");
  return registered ? 0 : 1;
}
