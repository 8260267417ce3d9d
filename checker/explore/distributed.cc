// The distributed search: BFS over P ranks (processes, usually on several machines), each owning the states whose
// hash maps to it, exchanging successors through a Transport (explore/transport.h; Open MPI in checker/cli).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <string>
#include <unistd.h>

#include "checker/explore/recent_states.h"
#include "checker/explore/searcher.h"
#include "checker/explore/state_store.h"
#include "checker/explore/transport.h"

namespace qpcheck::explore::internal {

namespace {

// Hash ownership across ranks (Stern and Dill's partitioning, as the threaded search does across shards and LTSmin's
// MPI back end across processes): rank r stores the states with route_owner(state) == r, expands them, and sends
// each successor to its owner. A BFS layer runs in rounds of Options::round_states states per rank: a rank expands
// the next states of its part of the layer into one outbox per rank; an all-to-all exchange; each rank inserts what
// it received, rank 0's messages first, and checks the new states' invariants; then one reduction tells every rank
// whether any part of the layer is left, what was found and which limit was reached, so all decide alike. Global
// state id = local id * P + rank (predecessor links hold global ids; a counterexample is rebuilt by passing each
// state of its chain from its owner to every rank).
//
// Per successor: one message of state_words() + 1 words (the state; the predecessor's global id << 32 | the action)
// travels from the expanding rank to the owner, unless both are the same rank; per round: one all-to-all of counts,
// one of messages and one reduction of a few words. Counts, verdicts and counterexample lengths are those of one
// process: the layers are complete before a verdict (of several violations at the same depth the one in the
// lowest rank is reported, a deadlock before the others, as at depth d it is shorter than a step to depth d+1).
//
// Checkpoints (Options::checkpoint_dir): at a layer boundary, each rank writes its store (every state and its
// predecessor), the layer's start and its counters to rank-R.ckpt; once all are written rank 0 writes the manifest
// (the layer, the rank count, the model's fingerprint). Options::resume_dir reads them back: the same ids, the same
// layer, the same counters, so the run goes on as if it had not stopped.
class DistributedSearch : public Searcher {
 public:
  DistributedSearch(model::TransitionSystem& sys, const Options& opt)
      : Searcher(sys, opt),
        net_(*opt.transport),
        ranks_(net_.size()),
        me_(net_.rank()),
        words_(sys.state_words()),
        store_(sys.word_bits(), StateStore::kMaxStates, ranks_),
        round_(opt.round_states > 0 ? opt.round_states : uint64_t{1} << 15),
        out_(static_cast<size_t>(ranks_)),
        buf_(static_cast<size_t>(words_)) {
    route_words_ = store_.tree() && words_ >= 2 ? words_ / 2 : words_;
    max_local_ = (uint64_t{kNoState} - 1) / static_cast<uint64_t>(ranks_) - 1;
    fired_.resize(sys.action_count(), 0);
    if (const char* f = std::getenv("QPCHECK_TEST_KILL_RANK_AT_LAYER")) {  // tests/distributed_test.cc only
      unsigned rank = 0, layer = 0;
      if (std::sscanf(f, "%u:%u", &rank, &layer) == 2 && static_cast<int>(rank) == me_) kill_at_layer_ = layer;
    }
  }

 private:
  int owner(const uint64_t* state) const { return route_owner(state, route_words_, ranks_); }
  uint32_t global(uint64_t local) const {
    return static_cast<uint32_t>(local * static_cast<uint64_t>(ranks_) + static_cast<uint64_t>(me_));
  }

  // Flags and counters reduced after every round (sum, then min for the finding's key).
  enum Field { kLeft, kDeadlock, kInterrupted, kTimeLimit, kMemory, kFull, kFields };

  void search() override {
    // Every rank must reach every collective call: nothing may throw out of the middle of an evaluation, so the time
    // limit and an interrupt are read between rounds only.
    sys_.set_deadline(std::chrono::steady_clock::time_point::max());
    sys_.set_interrupt(nullptr);
    const std::vector<std::vector<uint64_t>> inits = sys_.initial_states();
    if (!inits.empty()) recent_.emplace(words_, inits[0].data());  // every rank stores the initial states first
    if (!opt_.resume_dir.empty()) {
      resume();
      if (opt_.limits.max_depth && depth_ >= opt_.limits.max_depth) {
        limit_ = "max-depth";  // the checkpoint's layer is at or past the bound: stored, not expanded
        return;
      }
    } else {
      uint32_t first_local = kNoState;
      for (const auto& init : inits) {
        if (owner(init.data()) != me_) continue;
        auto [id, fresh] = store_.insert(init.data(), kNoState);
        if (fresh && first_local == kNoState) first_local = id;
        if (fresh && !found_) {
          if (auto v = sys_.check_invariants(init.data())) found_ = Found{*v, global(id), kNoState};
        }
      }
      begin_ = 0;
      end_ = store_.size();
      if (decide_found()) return;  // an initial state violates an invariant
    }
    for (;;) {
      if (kill_at_layer_ && depth_ == kill_at_layer_) ::raise(SIGKILL);  // a rank that dies (the resume test)
      // The layer [begin_, end_) in rounds.
      uint64_t next = begin_;
      for (;;) {
        const uint64_t upto = std::min(end_, next + round_);
        for (auto& o : out_) o.clear();
        for (uint64_t local = next; local < upto; ++local) expand(local);
        next = upto;
        std::vector<uint64_t> in, in_words;
        net_.exchange(out_, in, in_words);
        insert(in);
        std::vector<uint64_t> f(kFields, 0);
        f[kLeft] = next < end_;
        f[kDeadlock] = deadlock_.has_value();
        f[kInterrupted] = interrupted();
        f[kTimeLimit] = opt_.limits.time_limit_seconds > 0 && elapsed() >= opt_.limits.time_limit_seconds;
        f[kMemory] = opt_.limits.max_memory_bytes &&
                     store_.bytes() + sys_.memory_bytes() >= opt_.limits.max_memory_bytes / static_cast<uint64_t>(ranks_);
        f[kFull] = full_;
        net_.sum(f);
        if (f[kInterrupted] || f[kTimeLimit] || f[kMemory] || f[kFull]) {
          limit_ = f[kInterrupted] ? "interrupted" : f[kTimeLimit] ? "time-limit" : f[kFull] ? "max-states"
                                                                                            : "max-memory";
          return;
        }
        if (!f[kLeft]) break;
      }
      // A deadlock at depth d, or a violation at depth d + 1 (a new state's invariant, a failing step from depth d):
      // the layer is complete, so it is a shortest one, and the count is one process's.
      if (decide_found()) return;
      // The layer is done: the next one is what its rounds stored.
      begin_ = end_;
      end_ = store_.size();
      std::vector<uint64_t> n{end_ - begin_, store_.size(), stats_.transitions, store_.bytes()};
      net_.sum(n);
      if (n[0] == 0) return;  // every reachable state is stored and expanded
      ++depth_;
      stats_.depth = depth_;
      if (opt_.progress && me_ == 0) {  // after every layer (the caller rate-limits what it prints)
        model::SearchStats s = stats_;
        s.states = n[1];
        s.transitions = n[2];
        s.store_bytes = n[3];
        s.seconds = elapsed();
        s.queue = n[0];
        opt_.progress(s);
      }
      if (opt_.limits.max_depth && depth_ >= opt_.limits.max_depth) {
        limit_ = "max-depth";  // this layer is stored but not expanded
        return;
      }
      if (!opt_.checkpoint_dir.empty()) maybe_checkpoint();
    }
  }

  // Expands local state `local`; true if it is a deadlock (recorded: the search ends with its layer).
  bool expand(uint64_t local) {
    struct Sink : model::SuccessorSink {
      DistributedSearch* self;
      uint32_t from;
      void successor(uint32_t action, const uint64_t* state) override {
        ++self->stats_.transitions;
        self->fire(action);
        // A repeat of a successor this rank sent before (in this round or an earlier one): that copy reaches its
        // owner first, so this one would change nothing (RecentStates' rule).
        if (self->recent_->seen_before(state)) return;
        std::vector<uint64_t>& o = self->out_[static_cast<size_t>(self->owner(state))];
        o.insert(o.end(), state, state + self->words_);
        o.push_back(uint64_t{from} << 32 | action);
      }
      void failure(uint32_t action, const Violation& v) override {
        ++self->stats_.transitions;
        self->fire(action);
        if (!self->found_) self->found_ = Found{v, from, action};
      }
    } sink;
    sink.self = this;
    sink.from = global(local);
    store_.load(static_cast<uint32_t>(local), buf_.data());
    const int enabled = sys_.successors(buf_.data(), sink);
    if (enabled == 0 && opt_.check_deadlock) {
      store_.load(static_cast<uint32_t>(local), buf_.data());
      if (!sys_.valid_end(buf_.data())) {
        if (!deadlock_) deadlock_ = Found{model::deadlock(), global(local), kNoState};
        return true;
      }
    }
    return false;
  }

  // Stores what the round sent here, in rank order (kInsertBatch at a time through the store's prefetch pipeline),
  // and checks each new state's invariants.
  void insert(const std::vector<uint64_t>& in) {
    const size_t m = static_cast<size_t>(words_) + 1;
    const size_t n = in.size() / m;
    const uint64_t share = opt_.limits.max_states / static_cast<uint64_t>(ranks_);
    for (size_t i0 = 0; i0 < n; i0 += kInsertBatch) {
      const int batch = static_cast<int>(std::min<size_t>(kInsertBatch, n - i0));
      const uint64_t* first = &in[i0 * m];
      const bool limited = opt_.limits.max_states && store_.size() + static_cast<uint64_t>(batch) > share;
      if (!limited) store_.stage(first, m, batch);
      for (int k = 0; k < batch; ++k) {
        const uint64_t* msg = first + static_cast<size_t>(k) * m;
        const uint64_t link = msg[words_];
        if (store_.size() > max_local_ || (limited && store_.size() >= share)) {
          if (!store_.contains(msg)) full_ = true;
          continue;
        }
        auto [id, fresh] = limited ? store_.insert(msg, static_cast<uint32_t>(link >> 32))
                                   : store_.insert_staged(k, static_cast<uint32_t>(link >> 32));
        if (fresh && !found_) {
          if (auto v = sys_.check_invariants_after(static_cast<uint32_t>(link & 0xffffffffu), msg)) {
            found_ = Found{*v, global(id), kNoState};
          }
        }
      }
    }
  }

  // Every rank: which rank's finding is the search's (a deadlock first, then the lowest rank); that rank's Found is
  // sent to all. True if there is one.
  bool decide_found() {
    const uint64_t none = UINT64_MAX;
    std::vector<uint64_t> key{deadlock_ ? static_cast<uint64_t>(me_) : found_ ? (uint64_t{1} << 32) + me_ : none};
    net_.min(key);
    if (key[0] == none) return false;
    const int root = static_cast<int>(key[0] & 0xffffffffu);
    std::vector<uint64_t> wire;
    if (root == me_) {
      const Found& f = deadlock_ ? *deadlock_ : *found_;
      wire = encode(f);
    }
    net_.broadcast(wire, root);
    found_ = decode(wire);
    decided_ = true;
    return true;
  }

  static void put_string(std::vector<uint64_t>& w, const std::string& s) {
    w.push_back(s.size());
    for (size_t i = 0; i < s.size(); i += 8) {
      uint64_t x = 0;
      std::memcpy(&x, s.data() + i, std::min<size_t>(8, s.size() - i));
      w.push_back(x);
    }
  }
  static std::string get_string(const std::vector<uint64_t>& w, size_t& at) {
    const size_t n = static_cast<size_t>(w.at(at++));
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i += 8) {
      const uint64_t x = w.at(at++);
      std::memcpy(s.data() + i, &x, std::min<size_t>(8, n - i));
    }
    return s;
  }
  static std::vector<uint64_t> encode(const Found& f) {
    std::vector<uint64_t> w{f.state, f.failing_action, static_cast<uint64_t>(f.violation.kind),
                            static_cast<uint64_t>(static_cast<int64_t>(f.violation.span.file)),
                            static_cast<uint64_t>(f.violation.span.begin), static_cast<uint64_t>(f.violation.span.end)};
    put_string(w, f.violation.property);
    put_string(w, f.violation.message);
    return w;
  }
  static Found decode(const std::vector<uint64_t>& w) {
    Found f;
    f.state = static_cast<uint32_t>(w.at(0));
    f.failing_action = static_cast<uint32_t>(w.at(1));
    f.violation.kind = static_cast<Violation::Kind>(w.at(2));
    f.violation.span.file = static_cast<int>(static_cast<int64_t>(w.at(3)));
    f.violation.span.begin = static_cast<decltype(f.violation.span.begin)>(w.at(4));
    f.violation.span.end = static_cast<decltype(f.violation.span.end)>(w.at(5));
    size_t at = 6;
    f.violation.property = get_string(w, at);
    f.violation.message = get_string(w, at);
    return f;
  }

  // ---------------------------------------------------------------- checkpoints
  // A checkpoint's files are named by their layer, so that writing the next one never touches the last complete one
  // (the manifest names it); once a newer manifest is in place, the older files are removed.
  std::string rank_file(const std::string& dir, uint64_t layer) const {
    return dir + "/rank-" + std::to_string(me_) + ".layer-" + std::to_string(layer) + ".ckpt";
  }
  // FNV-1a over a file's bytes between the magic numbers: a damaged checkpoint is refused, never resumed.
  struct Checksum {
    uint64_t h = 0xcbf29ce484222325ULL;
    void add(const void* p, size_t n) {
      const auto* b = static_cast<const unsigned char*>(p);
      for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
    }
  };
  void maybe_checkpoint() {
    std::vector<uint64_t> due{elapsed() >= next_checkpoint_ ? uint64_t{1} : 0};
    net_.max(due);  // rank clocks differ: one decision
    if (!due[0]) return;
    next_checkpoint_ = elapsed() + opt_.checkpoint_every;
    const std::string& dir = opt_.checkpoint_dir;
    std::vector<uint64_t> ok{1};
    std::string why;
    try {
      std::filesystem::create_directories(dir);
      const std::string tmp = rank_file(dir, depth_) + ".tmp";
      {
        std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
        Checksum sum;
        auto raw = [&](const void* p, size_t n) {
          o.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
          sum.add(p, n);
        };
        auto put = [&](uint64_t v) { raw(&v, sizeof v); };
        const uint64_t magic = kMagic;
        o.write(reinterpret_cast<const char*>(&magic), sizeof magic);
        put(static_cast<uint64_t>(ranks_));
        put(static_cast<uint64_t>(me_));
        put(static_cast<uint64_t>(words_));
        put(depth_);
        put(begin_);
        put(store_.size());
        put(stats_.transitions);
        put(fired_.size());
        raw(fired_.data(), fired_.size());
        for (uint64_t id = 0; id < store_.size(); ++id) {
          store_.load(static_cast<uint32_t>(id), buf_.data());
          raw(buf_.data(), static_cast<size_t>(words_) * 8);
          put(store_.predecessor(static_cast<uint32_t>(id)));
        }
        const uint64_t h = sum.h;
        o.write(reinterpret_cast<const char*>(&h), sizeof h);
        o.write(reinterpret_cast<const char*>(&magic), sizeof magic);
        if (!o.flush()) throw std::runtime_error("cannot write " + tmp);
      }
      std::filesystem::rename(tmp, rank_file(dir, depth_));
    } catch (const std::exception& e) {
      ok[0] = 0;
      why = e.what();
    }
    net_.min(ok);  // the manifest names a layer only once every rank has written it
    if (!ok[0]) {
      if (!why.empty()) std::fprintf(stderr, "qpcheck: warning: checkpoint not written: %s\n", why.c_str());
      return;
    }
    std::vector<uint64_t> total{store_.size()};
    net_.sum(total);
    if (me_ == 0) {
      const std::string tmp = dir + "/manifest.tmp";
      {
        std::ofstream m(tmp, std::ios::trunc);
        m << "qpcheck checkpoint 1\nfingerprint " << opt_.fingerprint << "\nranks " << ranks_ << "\nlayer " << depth_
          << "\nstates " << total[0] << "\n";
      }
      std::filesystem::rename(tmp, dir + "/manifest");
    }
    std::vector<uint64_t> done{1};
    net_.max(done);  // the new manifest is in place: the previous checkpoint's files can go
    if (has_checkpoint_ && checkpointed_ != depth_) {
      std::error_code ignored;
      std::filesystem::remove(rank_file(dir, checkpointed_), ignored);
    }
    checkpointed_ = depth_;
    has_checkpoint_ = true;
  }

  [[noreturn]] void bad_resume(const std::string& why) const {
    throw std::runtime_error("--resume " + opt_.resume_dir + ": " + why);
  }
  void resume() {
    const std::string& dir = opt_.resume_dir;
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) bad_resume("no such folder");
    if (!std::filesystem::is_directory(dir, ec)) bad_resume("not a folder (--checkpoint wrote a folder)");
    std::ifstream m(dir + "/manifest");
    if (!m) bad_resume("no manifest (no checkpoint was completed there)");
    std::string line, fingerprint;
    uint64_t ranks = 0, layer = 0, states = 0;
    std::getline(m, line);
    if (line != "qpcheck checkpoint 1") bad_resume("not a qpcheck checkpoint manifest");
    std::string key;
    while (m >> key) {
      if (key == "fingerprint") m >> fingerprint;
      else if (key == "ranks") m >> ranks;
      else if (key == "layer") m >> layer;
      else if (key == "states") m >> states;
      else bad_resume("unknown manifest field '" + key + "'");
    }
    if (fingerprint != opt_.fingerprint) {
      bad_resume("it was written for another spec, parameters or property choice (fingerprint " + fingerprint +
                 ", this run's " + opt_.fingerprint + ")");
    }
    if (ranks != static_cast<uint64_t>(ranks_)) {
      bad_resume("it was written by " + std::to_string(ranks) + " ranks; resume it with mpirun -np " +
                 std::to_string(ranks) + " (this run has " + std::to_string(ranks_) + ")");
    }
    // The rank's own file: an error here may be this rank's alone, so every rank first learns whether all could read
    // theirs (a rank that stopped alone would leave the others waiting in a collective call).
    std::string local_error;
    try {
      read_rank_file(dir, layer);
    } catch (const std::runtime_error& e) {
      local_error = e.what();
    }
    std::vector<uint64_t> all_read{local_error.empty() ? uint64_t{1} : 0};
    net_.min(all_read);
    if (!local_error.empty()) throw std::runtime_error(local_error);
    if (!all_read[0]) bad_resume("another rank could not read its part of the checkpoint (its message names it)");
    const std::string file = rank_file(dir, layer);
    // Every predecessor link must name a state some rank holds (a counterexample's chain is followed through them).
    std::vector<uint64_t> sizes(static_cast<size_t>(ranks_), 0);
    sizes[static_cast<size_t>(me_)] = store_.size();
    net_.sum(sizes);
    uint64_t total = 0;
    for (uint64_t s : sizes) total += s;
    if (total != states) bad_resume("the ranks' files hold " + std::to_string(total) + " states, the manifest says " +
                                    std::to_string(states));
    std::string broken;
    for (uint64_t id = 0; id < store_.size() && broken.empty(); ++id) {
      const uint32_t pred = store_.predecessor(static_cast<uint32_t>(id));
      if (pred != kNoState && pred / static_cast<uint32_t>(ranks_) >= sizes[pred % static_cast<uint32_t>(ranks_)]) {
        broken = file + " is corrupt (state " + std::to_string(id) + " has no predecessor " + std::to_string(pred) + ")";
      }
    }
    std::vector<uint64_t> links_ok{broken.empty() ? uint64_t{1} : 0};
    net_.min(links_ok);  // as above: every rank learns it before any stops
    if (!broken.empty()) bad_resume(broken);
    if (!links_ok[0]) bad_resume("another rank's part of the checkpoint is corrupt (its message names it)");
    end_ = store_.size();
    stats_.depth = depth_;
    checkpointed_ = depth_;
    has_checkpoint_ = opt_.checkpoint_dir == opt_.resume_dir;  // resuming into the same folder: its files are ours
    resumed_ = true;
  }

  // Reads this rank's file of the checkpoint of `layer` into the store (states in id order), the layer's start and
  // the counters. Throws runtime_error (bad_resume) when it is missing, truncated, damaged or another rank's.
  void read_rank_file(const std::string& dir, uint64_t layer) {
    const std::string file = rank_file(dir, layer);
    std::ifstream in(file, std::ios::binary);
    if (!in) bad_resume("cannot read " + file);
    Checksum sum;
    auto raw = [&](void* p, size_t n) {
      if (!in.read(static_cast<char*>(p), static_cast<std::streamsize>(n))) bad_resume(file + " is truncated");
      sum.add(p, n);
    };
    auto get = [&]() {
      uint64_t v = 0;
      raw(&v, sizeof v);
      return v;
    };
    uint64_t magic = 0;
    if (!in.read(reinterpret_cast<char*>(&magic), sizeof magic) || magic != kMagic) {
      bad_resume(file + " is not a qpcheck checkpoint");
    }
    if (get() != static_cast<uint64_t>(ranks_) || get() != static_cast<uint64_t>(me_) ||
        get() != static_cast<uint64_t>(words_)) {
      bad_resume(file + " belongs to another rank or model");
    }
    depth_ = get();
    if (depth_ != layer) bad_resume(file + " is of layer " + std::to_string(depth_) + ", the manifest's " +
                                    std::to_string(layer));
    begin_ = get();
    const uint64_t size = get();
    stats_.transitions = get();
    const uint64_t nf = get();
    if (nf > (uint64_t{1} << 32) || size > StateStore::kMaxStates || begin_ > size) {
      bad_resume(file + " is corrupt");
    }
    fired_.assign(nf, 0);
    raw(fired_.data(), nf);
    // The states go into the store only once the checksum has vouched for them.
    std::vector<uint64_t> rows(size * (static_cast<size_t>(words_) + 1));
    for (uint64_t id = 0; id < size; ++id) {
      raw(&rows[id * (static_cast<size_t>(words_) + 1)], static_cast<size_t>(words_) * 8);
      rows[id * (static_cast<size_t>(words_) + 1) + static_cast<size_t>(words_)] = get();
    }
    const uint64_t want = sum.h;
    uint64_t h = 0, end = 0;
    if (!in.read(reinterpret_cast<char*>(&h), sizeof h) || !in.read(reinterpret_cast<char*>(&end), sizeof end)) {
      bad_resume(file + " is truncated");
    }
    if (end != kMagic) bad_resume(file + " is corrupt (no end mark)");
    if (h != want) bad_resume(file + " is damaged (its checksum does not match)");
    if (in.peek() != std::char_traits<char>::eof()) bad_resume(file + " is corrupt (bytes after its end mark)");
    for (uint64_t id = 0; id < size; ++id) {
      const uint64_t* row = &rows[id * (static_cast<size_t>(words_) + 1)];
      const uint64_t pred = row[words_];
      if (pred > kNoState) bad_resume(file + " is corrupt (state " + std::to_string(id) + ")");
      auto [got, fresh] = store_.insert(row, static_cast<uint32_t>(pred));
      if (!fresh || got != id) bad_resume(file + " is corrupt (state " + std::to_string(id) + ")");
    }
  }

  model::CheckResult finish() override {
    // Every rank takes part: the sums, then the counterexample's chain, state by state from its owner.
    std::vector<uint64_t> sums{store_.size(), stats_.transitions, store_.bytes()};
    net_.sum(sums);
    fired_.resize(std::max<size_t>(fired_.size(), sys_.action_count()), 0);
    std::vector<uint64_t> fired(fired_.begin(), fired_.end());
    net_.max(fired);
    for (size_t a = 0; a < fired.size(); ++a) fired_[a] = static_cast<uint8_t>(fired[a]);
    if (!decided_) found_.reset();  // a rank's own finding in a round a limit ended: not the search's
    stats_.transitions = sums[1];
    close_stats(sums[0], sums[2]);
    return exact_result(limit_.empty(), kNoState, [&](uint32_t last) {
      model::Path p;
      std::vector<std::vector<uint64_t>> chain;
      for (uint32_t g = last; g != kNoState;) {
        const int owner = static_cast<int>(g % static_cast<uint32_t>(ranks_));
        std::vector<uint64_t> w;
        if (owner == me_) {
          const uint32_t local = g / static_cast<uint32_t>(ranks_);
          w.resize(static_cast<size_t>(words_) + 1);
          store_.load(local, w.data());
          w[static_cast<size_t>(words_)] = store_.predecessor(local);
        }
        net_.broadcast(w, owner);
        g = static_cast<uint32_t>(w.at(static_cast<size_t>(words_)));
        w.pop_back();
        chain.push_back(std::move(w));
      }
      for (size_t i = chain.size(); i-- > 0;) {
        if (!p.states.empty()) p.actions.push_back(action_between(sys_, p.states.back(), chain[i]));
        p.states.push_back(std::move(chain[i]));
      }
      return p;
    });
  }

  static constexpr uint64_t kMagic = 0x31544b4350515051ULL;  // "QPQPCKT1"
  Transport& net_;
  int ranks_, me_, words_;
  StateStore store_;
  uint64_t round_;
  int route_words_ = 0;
  uint64_t max_local_ = 0;
  std::vector<std::vector<uint64_t>> out_;
  std::vector<uint64_t> buf_;
  uint64_t begin_ = 0, end_ = 0, depth_ = 0;
  std::optional<Found> deadlock_;
  std::optional<RecentStates> recent_;  // successors this rank sent (explore/recent_states.h)
  bool full_ = false;
  double next_checkpoint_ = 0;
  uint64_t checkpointed_ = 0;         // the layer of the last checkpoint written (or resumed from)
  bool has_checkpoint_ = false;
  bool resumed_ = false;
  bool decided_ = false;              // found_ is the search's, the same on every rank (decide_found)
  uint64_t kill_at_layer_ = 0;
};

}  // namespace

model::CheckResult search_distributed(model::TransitionSystem& sys, const Options& opt) {
  return DistributedSearch(sys, opt).run();
}

}  // namespace qpcheck::explore::internal
