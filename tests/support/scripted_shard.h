#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace santral::test {

// A listener on a free 127.0.0.1 port that plays a shard for unit tests of connections, on a
// thread of its own. It answers as Redis 7 would the few commands those tests send: CLIENT ID
// (7 for the first connection accepted, 8 for the second...), CLIENT KILL ID <id> (closes that
// connection, unread bytes and all, and answers :1, or :0 when there is none), PING, ECHO, GET
// (nil), MIGRATE (+NOKEY), anything else +OK.
//
// It can also play a stopped shard (SIGSTOP): a connection that stalls reads nothing more once
// its handshake (CLIENT but CLIENT LIST, HELLO, AUTH, SELECT at its head) is answered, so what the
// router sends next stays in that socket's receive queue (unread()). wake() reads and answers it
// again, as the shard would once resumed.
class ScriptedShard {
 public:
  // `stall_first`: the first connection accepted stalls after its handshake.
  explicit ScriptedShard(bool stall_first = true);
  ~ScriptedShard();
  ScriptedShard(const ScriptedShard&) = delete;
  ScriptedShard& operator=(const ScriptedShard&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // Connections accepted so far.
  int accepted() const;
  // Bytes that reached connection `n` (0: the first accepted) and were not read.
  std::size_t unread(int n) const;
  // The commands read from connection `n` so far, each as its words.
  std::vector<std::vector<std::string>> commands(int n) const;
  // Every CLIENT KILL read so far, with the connection it came on.
  struct Kill {
    int connection;
    std::vector<std::string> words;
  };
  std::vector<Kill> kills() const;

  // While on, a CLIENT KILL read is not carried out or answered, and its connection reads
  // nothing more, until it is turned off.
  void hold_kills(bool on);
  // Connection `n` reads and answers what it holds, and what comes after.
  void wake(int n);
  // While on, a CLIENT ID read is not answered, and its connection reads nothing more, until it
  // is turned off (a shard slow to answer the handshake).
  void hold_client_ids(bool on);
  // From now on (0: never), the reply to a command that is not a handshake goes out in two
  // writes: its first `bytes` now, the rest (and every reply after it) at send_rest().
  void split_replies(std::size_t bytes);
  void send_rest(int n);
  // The shard ends connection `n` (a restart, a timeout of its own).
  void drop(int n);
  // Connection `n` goes silent for good, as one whose link lost it without a close (a
  // half-open TCP connection): it reads nothing more, answers nothing (a kill or CLIENT ID it
  // holds is dropped) and stays open. New connections are served as before.
  void lose(int n);

 private:
  struct Connection {
    int fd = -1;
    bool stalls = false;   // stops after its handshake
    bool stopped = false;  // reads nothing now
    bool closed = false;
    bool lost = false;  // lose(): silent for good
    std::string inbox;  // read, not yet a whole command
    std::vector<std::vector<std::string>> commands;
    std::vector<std::string> held_kill;  // hold_kills(): a CLIENT KILL not carried out yet
    bool held_client_id = false;         // hold_client_ids(): a CLIENT ID not answered yet
    std::string rest;                    // split_replies(): replies not sent yet
  };

  void run();
  void accept_one();
  // Reads and answers what connection `n` may read now.
  void serve(int n);
  // Answers `words` on connection `n`; false when it must wait (a held kill).
  bool answer(int n, const std::vector<std::string>& words);
  void carry_out_kill(int n, const std::vector<std::string>& words);
  void send_to(int n, const std::string& bytes);
  // send_to(), split as split_replies() says.
  void reply_to(int n, const std::string& bytes);
  void wake_thread();

  bool stall_first_;
  int listener_ = -1;
  int port_ = 0;
  int wake_pipe_[2] = {-1, -1};
  mutable std::mutex mutex_;
  std::vector<Connection> connections_;
  std::vector<Kill> kills_;
  bool holding_kills_ = false;
  bool holding_client_ids_ = false;
  std::size_t split_at_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace santral::test
