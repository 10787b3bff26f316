#include "router/transport/handshake_log.h"

#include <atomic>
#include <chrono>

#include <spdlog/spdlog.h>

namespace santral::router {

namespace {
std::atomic<std::int64_t> last_logged_ms{0};
std::atomic<std::uint64_t> unlogged{0};
}  // namespace

void handshake_failed(const std::string& peer, const std::string& why) {
  using namespace std::chrono;
  auto now = duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
  auto last = last_logged_ms.load();
  if (now - last < 1000 || !last_logged_ms.compare_exchange_strong(last, now)) {
    unlogged.fetch_add(1);
    return;
  }
  auto more = unlogged.exchange(0);
  std::string advice = why.find("wrong version number") != std::string::npos ||
                               why.find("http request") != std::string::npos
                           ? " (plain RESP or HTTP on the TLS port? use the plain `listen:` port)"
                           : "";
  if (more > 0)
    spdlog::warn(
        "TLS handshake with client {} failed: {}{}; {} more failed since the last such "
        "message",
        peer, why, advice, more);
  else
    spdlog::warn("TLS handshake with client {} failed: {}{}", peer, why, advice);
}

}  // namespace santral::router
