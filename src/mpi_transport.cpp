// The CMake target refx::mpi: an object library whose one object, compiled
// once, is linked into every program that links the target (header-only or
// with refx::compiled; CMakeLists.txt says why both work). Including the MPI
// transport registers it as the transport of Runtime::global()
// (transport::default_remote()), so that a program started by mpirun spreads
// its meshes over the ranks. Linking refx::mpi, not a macro, is what chooses
// MPI (docs/transport.md).
#include <refx/transport/mpi.hpp>
