// Compiled into every program that links the CMake target refx::mpi (its
// INTERFACE_SOURCES): including the MPI transport registers it as the
// transport of Runtime::global() (transport::default_remote()), so that a
// program started by mpirun spreads its meshes over the ranks. Linking
// refx::mpi, not a macro, is what chooses MPI (docs/transport.md).
#include <refx/transport/mpi.hpp>
