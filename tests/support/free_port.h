#pragma once

namespace santral::test {

// A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's choice).
int free_loopback_port();

}  // namespace santral::test
