// clef: many decisions with bounded concurrency over reused connections.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/client.hpp"
#include "clef/export.hpp"

namespace clef {

class DrivenCurlLoop;

/// A budget of request starts shared with other processes (clef batch --rate-store keeps one in
/// Redis for every shard of a run): run_batch asks it before each start, once a host is chosen.
class CLEF_API SharedRate {
 public:
  virtual ~SharedRate() = default;
  /// Takes one start from the budget: zero when the request may start now, else how long to
  /// wait before asking again (nothing was taken then). Called with run_batch's lock held, one
  /// call at a time: it must answer quickly (a round trip to a nearby server, with a timeout).
  virtual std::chrono::nanoseconds take() = 0;
};

struct BatchOptions {
  /// The most requests in flight at once (each keeps its own keep-alive connection). A ceiling:
  /// a 503 cuts what is in flight to 0.7 of it, clean answers grow it back (AIMD).
  std::size_t concurrency = 4;
  /// Cap on requests started per second across all workers; 0 = no cap (at most one a day is
  /// honoured: a slower rate waits a day). A 429 also sets a
  /// pace (0.95 × the rate the server was accepting, raised slowly while answers come clean);
  /// the batch starts requests at the slower of the two.
  double max_requests_per_second = 0;
  /// With max_requests_per_second: the first request starts this long after run_batch begins.
  /// Shards that share one rate (clef batch --rate-total) each wait their place in it, so that
  /// together they start evenly spaced instead of in one burst.
  std::chrono::nanoseconds first_start_offset{0};
  /// A budget shared with other processes, asked before each start besides the cap above;
  /// nullptr: none.
  std::shared_ptr<SharedRate> shared_rate;
  /// Deliver results in input order (a bounded window of finished results is held back).
  bool ordered = false;
  /// Send identical request bodies once. Only a SHA-256 of each unique body and the index of its
  /// first item are kept (about 80 bytes per unique body), never the result: a duplicate is
  /// announced through on_duplicate once its first item has been delivered to the sink.
  bool dedupe = false;
  /// With dedupe: item `index` has the same request as the earlier item `first`, whose result
  /// the sink has already received. Called like the sink (one thread at a time, in order when
  /// `ordered`). When empty, duplicates are sent like any other item.
  std::function<void(std::size_t index, std::size_t first)> on_duplicate;
  /// A 429 or 503 sends the item again: it never fails an item until the item has been
  /// throttled this long in all. Before a 429 has set a pace, a refusal that names a
  /// Retry-After (or of the only request in flight) pauses every request, for Retry-After up to
  /// RetryPolicy::max_retry_after or the client's backoff; once paced, the refused item alone
  /// waits out its Retry-After.
  std::chrono::milliseconds throttle_budget{600'000};
  /// Called on the calling thread after each group of results handed to the sink (and to
  /// on_duplicate), before that thread waits again or run_batch returns: a sink that buffers
  /// what it writes writes it here, once per group rather than once per result (clef batch
  /// writes a group's lines in one write). A group is what came back while the calling thread
  /// was busy or asleep, at most about concurrency results. Not called when nothing was handed
  /// over; not called after a source or sink that threw.
  std::function<void()> after_delivery;
  /// Told when a 429/503 pauses the batch and until when (called like the sink).
  std::function<void(std::chrono::system_clock::time_point until, const Error& why)> on_pause;
  /// Told of each 429/503 as it is counted in BatchSummary::throttled, with the base URL of the
  /// host that refused (called like the sink, with the next results rather than at once).
  std::function<void(const std::string& host)> on_refusal;
  /// Asked on the calling thread (like the sink, so it may read what the sink wrote): each time
  /// that thread wakes (items read, a batch of results delivered) and at least every 20 ms.
  /// Once it returns true no new item is sent; items in flight finish, and items already read
  /// but not yet sent (at most 2 × concurrency) are delivered as ErrorKind::cancelled. Pair with
  /// ClientOptions::cancel to stop the items in flight too.
  std::function<bool()> should_stop;
  /// Called once, on the calling thread, when the run ends early (a stop, a cancel, a spent
  /// quota, the cost cap, an unreachable server) while the source is still inside a call, waiting
  /// for input (a pipe whose writer is slow): it should make that call return soon (std::nullopt
  /// will do). run_batch returns only once the source's call has returned, since the source is
  /// the caller's; without this, a source that waits holds the end of the run (not its results)
  /// until its input comes. May be called while the source runs on another thread.
  std::function<void()> interrupt_source;
  /// The source answers without waiting for input (items in memory, a regular file): run_batch
  /// calls it on the calling thread, between groups of results, instead of on a reader thread
  /// of its own, which saves a thread and a hand-off per item. Leave it false for a source that
  /// may wait (a pipe, a FIFO, a socket): while the calling thread waited in it, no result would
  /// be delivered and should_stop would not be asked.
  bool source_never_waits = false;
  /// The loop the hosts' transports run on, when it has no thread of its own
  /// (make_driven_curl_loop) and the calling thread owns it: run_batch (and decide_all) turn it
  /// here, between deliveries, instead of sleeping until another thread's loop has results. With
  /// source_never_waits the whole run is the calling thread: nothing is handed between threads
  /// (clef batch from a file to a file, a sixth less CPU per decision). While the source or the
  /// sink holds the thread, nothing in flight moves on, and each transfer's timeout runs on:
  /// use it where neither waits long. Another thread must not turn the loop meanwhile.
  std::shared_ptr<DrivenCurlLoop> drive_loop;
  /// Ends the run from any thread: no new item starts, and every item in flight or waiting out
  /// a pause ends at once with ErrorKind::cancelled, delivered to the sink like any result;
  /// BatchSummary::stopped is true. (should_stop is asked; this is heard.)
  CancelToken cancel;
  /// A cap on what the run spends, in dollars (Decision::cost): no request starts that could take
  /// the spend past it — what was spent (already_spent included) plus, for each request in
  /// flight and the one to start, the dearest decision so far. Until one decision's cost is
  /// known, one request at a time (its cost is learned, not estimated); then at most twice as
  /// many in flight as decisions whose cost is known (a few cheap answers are thin evidence of
  /// the next one's price). A cache hit's $0 is no evidence of a price. Reached, nothing more
  /// starts and BatchSummary::cost_cap_reached is set. A decision whose cost is unknown stops
  /// the run too (BatchSummary::cost_unknown): the cap could not hold. A failed request is taken
  /// to cost nothing. The limit: a decision dearer than every one before it passes the estimate
  /// by the difference, for each request then in flight. nullopt: no cap.
  std::optional<double> max_cost_usd;
  /// What was spent before this run (clef batch --resume adds up the lines it keeps): it counts
  /// toward max_cost_usd, and its dearest decision is the estimate until this run knows better.
  struct SpentBefore {
    double usd = 0;
    double dearest_usd = 0;
    std::size_t decisions = 0;  ///< With a known cost (cache hits left out).
  };
  SpentBefore already_spent;
  /// Stop when the server is not there at all: once 2 × concurrency results in a row, before any
  /// success, are connection failures or TLS errors (ErrorKind::connection_failed, tls), no new
  /// item starts, as with should_stop, and BatchSummary::unreachable holds the last of them. A
  /// run that has had a success never stops this way (a flaky server fails items, one by one).
  bool stop_when_unreachable = false;
  /// Several hosts (run_batch over a vector of clients): the most requests in flight on any one
  /// of them (0: no cap but `concurrency`, which counts every host together). Each host also
  /// has its own adaptive limit and pace, learned from its own 503s and 429s.
  std::size_t per_host = 0;
  /// Several hosts: send each state to the same host (rendezvous hashing of its wire JSON, so
  /// a server that caches a state's encoding keeps getting it, and a host that leaves moves
  /// only its own states), or, when that host has no room, to the one with the fewest
  /// outstanding. Without it, every item goes to the healthy host with the fewest outstanding.
  bool state_affinity = false;
  /// Several hosts: at most this share of them set aside (ejected) at once, as Envoy's
  /// max_ejection_percent (default 10%), and always at least one. A host that fails past the
  /// cap stays in rotation as a last resort (an item goes to it only when no other host can
  /// take one, and one request a second probes it) until one set aside comes back: a fault
  /// that hits many hosts at once (a bad deploy, a shared dependency) must not take most of the
  /// fleet away. 1.0: every host may be set aside.
  double max_ejected_share = 0.1;
};

/// How one host of a run_batch over several hosts did.
struct HostSummary {
  std::string host;           ///< Its base URL.
  std::size_t answered = 0;   ///< Decisions it returned.
  std::size_t failed = 0;     ///< Items delivered with its error.
  std::size_t refused = 0;    ///< Its 429/503 answers (each item was sent again).
  std::size_t moved = 0;      ///< Items it failed that went on to another host.
  std::size_t ejections = 0;  ///< Times it was set aside after failing again and again.
};

/// Pulls the next request; std::nullopt ends the input. An item that is already known to be bad
/// (an unparsable input line) is yielded as an Error and delivered in sequence like any result.
/// run_batch calls it on a thread of its own, one call at a time, while the sink may be running
/// on the calling thread: what the two share needs a lock (unless
/// BatchOptions::source_never_waits puts it on the calling thread).
using RequestSource = std::function<std::optional<Result<DecisionRequest>>()>;
/// Receives each result with its input index (0-based). Called from one thread at a time,
/// never concurrently, so it may write to a file without locking.
using ResultSink = std::function<void(std::size_t index, Result<Decision>&& result)>;

struct BatchSummary {
  std::size_t started = 0;       ///< Items taken from the source.
  std::size_t succeeded = 0;     ///< Delivered with a Decision.
  std::size_t failed = 0;        ///< Delivered with an Error.
  std::size_t deduplicated = 0;  ///< Delivered from an identical earlier request.
  std::size_t throttled = 0;     ///< 429/503 responses (each item was sent again).
  bool stopped = false;          ///< BatchOptions::should_stop ended the run early.
  /// A result was quota_exhausted (Workers AI's daily allocation): no item was started after
  /// it, since every one would fail the same way.
  bool quota_exhausted = false;
  /// With BatchOptions::stop_when_unreachable: why the run stopped (the server could not be
  /// reached), or nullopt.
  std::optional<Error> unreachable;
  /// One per host, in the order given (one entry for a single client).
  std::vector<HostSummary> hosts;
  /// Several hosts: the most of them set aside at the same moment (BatchOptions::max_ejected_share
  /// caps it).
  std::size_t most_ejected_at_once = 0;
  /// This run's known decision costs, in dollars (BatchOptions::already_spent not included).
  double spent_usd = 0;
  /// BatchOptions::max_cost_usd stopped the run: the next request could have passed it.
  bool cost_cap_reached = false;
  /// With BatchOptions::max_cost_usd: a decision's cost was unknown, so the run stopped.
  bool cost_unknown = false;
};

/// The streaming engine behind decide_all and `clef batch`: memory stays flat however long
/// the input, since only the items in flight (and, when ordered, a bounded window) are held.
///
/// Threads: the sink, on_duplicate, on_pause, on_refusal and should_stop are called on the calling
/// thread, one at a time. The source is called on a reader thread of the run's own, so a source
/// that waits for input (a pipe, a FIFO) holds back neither the results already answered nor a
/// stop: it reads up to `concurrency` items ahead of those in flight, and each item it reads is
/// sent as soon as there is room, without waiting for the next (with
/// BatchOptions::source_never_waits, on the calling thread instead, as many at a time as there
/// is room for). The client's event loop settles
/// each result and starts the next item itself; the calling thread is woken for items read and for
/// a batch of results (about half of `concurrency` at a time), not for each one. When the run stops
/// early (should_stop, cancel, a spent quota, an unreachable server, the cost cap), the items read
/// and never sent are delivered as ErrorKind::cancelled, so every item read from the source is
/// delivered exactly once (see BatchOptions::interrupt_source for a source that waits). An
/// exception from the source, the sink or a callback ends the run and is rethrown here once the
/// requests in flight have come back.
/// Throws std::logic_error, before anything starts, where it would wait for ever: in one of the
/// client's own callbacks, or on the thread that turns its driven loop (make_driven_curl_loop)
/// unless that loop is BatchOptions::drive_loop.
CLEF_API BatchSummary run_batch(const Client& client, const RequestSource& source,
                                const ResultSink& sink, const BatchOptions& options = {});

/// run_batch over several servers that serve the same model. Each item goes to the healthy host
/// with the fewest requests outstanding (or, with BatchOptions::state_affinity, to its state's
/// own host). A 429 or 503 teaches that host its own limits and the item goes to another; a
/// failure that a retry may fix (connection refused, timeout, 5xx) moves the item to another
/// host — a failed connection without spending the item's retries (RetryPolicy::max_attempts
/// counts the others), within BatchOptions::throttle_budget. A host that fails 3 times in a row
/// is set aside for 1 s, then 2, 4, 8, up to 16 s; after that one request probes it, and an
/// answer gives it its full share again. Each Decision (and Error) says which host answered
/// (Decision::host, Error::host). The first client's retry policy and request body stand for
/// all. Throws std::invalid_argument for an empty `hosts`.
CLEF_API BatchSummary run_batch(const std::vector<Client>& hosts, const RequestSource& source,
                                const ResultSink& sink, const BatchOptions& options = {});

/// One result per request, in the same order (duplicates, with dedupe, get copies). run_batch
/// underneath: it throws where run_batch throws.
///
///     clef::BatchOptions options;
///     options.concurrency = 8;
///     std::vector<clef::Result<clef::Decision>> results = clef::decide_all(client, requests, options);
CLEF_API std::vector<Result<Decision>> decide_all(const Client& client,
                                                  const std::vector<DecisionRequest>& requests,
                                                  BatchOptions options = {});

/// Which of `shards` shards an item belongs to (clef batch --shard K/N): the first eight bytes of
/// SHA-256 of `id`, read as a big-endian number, modulo `shards`. `id` is the id as clef batch
/// keys it, its compact JSON text (`"x001"` with its quotes, `7` for a number), so the same id is
/// in the same shard whatever the order of the input and on every machine. 0 when `shards` < 2.
CLEF_API std::size_t shard_of(std::string_view id, std::size_t shards);

}  // namespace clef
