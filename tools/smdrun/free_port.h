// Picks the rendezvous port when the user gives none.
#pragma once

#include <string>

namespace smdrun {

// Binds a TCP socket to port 0 on `addr` (a name or numeric address), reads
// back the port the kernel chose and closes it again. The port is free now;
// rank 0 binds it moments later. Throws std::runtime_error naming `addr`.
int pick_free_port(const std::string &addr);

}  // namespace smdrun
