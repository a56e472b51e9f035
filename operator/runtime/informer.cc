#include "operator/runtime/informer.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "operator/kube/errors.h"
#include "operator/runtime/backoff.h"

namespace disttrain::runtime {

Informer::Informer(kube::KubeClient* client, InformerOptions options)
    : client_(client),
      options_(std::move(options)),
      name_(absl::StrCat(options_.resource.plural, options_.label_selector.empty()
                                                       ? ""
                                                       : "[" + options_.label_selector + "]")),
      store_(options_.store_encoding) {}

Informer::~Informer() { Stop(); }

void Informer::AddHandler(EventHandler handler) { handlers_.push_back(std::move(handler)); }

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    if (current_ != nullptr) current_->Cancel();
  }
  if (thread_.joinable()) thread_.join();
}

bool Informer::WaitForSync(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (!HasSynced() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  return HasSynced();
}

bool Informer::SleepUnlessStopped(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopped_), d);
  return !stopped_;
}

nlohmann::json StripMetadata(nlohmann::json object) {
  if (!object.contains("metadata")) return object;
  nlohmann::json& meta = object["metadata"];
  meta.erase("managedFields");
  if (meta.contains("annotations") && meta["annotations"].is_object()) {
    meta["annotations"].erase("kubectl.kubernetes.io/last-applied-configuration");
    if (meta["annotations"].empty()) meta.erase("annotations");
  }
  return object;
}

ObjectPtr Informer::Prepare(nlohmann::json object, bool decoded) const {
  if (decoded) return std::make_shared<const nlohmann::json>(std::move(object));
  if (options_.strip_metadata) object = StripMetadata(std::move(object));
  if (options_.transform) object = options_.transform(std::move(object));
  return std::make_shared<const nlohmann::json>(std::move(object));
}

absl::Status Informer::ListAndReplace(std::string* resource_version) {
  kube::ListOptions options;
  options.label_selector = options_.label_selector;
  options.limit = options_.page_size;
  options.decoder = options_.decode_protobuf;
  std::vector<ObjectPtr> objects;
  std::string rv;
  bool decoded = false;
  do {
    absl::StatusOr<kube::ListResult> page =
        client_->List(options_.resource, options_.namespace_name, options);
    if (!page.ok()) return page.status();
    for (nlohmann::json& item : page->items) {
      objects.push_back(Prepare(std::move(item), page->decoded));
    }
    rv = page->resource_version;
    decoded = page->decoded;
    options.continue_token = page->continue_token;
  } while (!options.continue_token.empty());

  // Tell handlers what changed compared to the cache (adds, updates, and deletes missed while
  // the watch was down).
  std::map<std::string, ObjectPtr> fresh;
  for (const ObjectPtr& o : objects) fresh[ObjectKey(*o)] = o;
  std::vector<ObjectPtr> old_objects = store_.List();
  store_.Replace(objects);
  for (const ObjectPtr& old : old_objects) {
    if (!fresh.count(ObjectKey(*old))) {
      for (auto& h : handlers_)
        if (h.on_delete) h.on_delete(old);
    }
  }
  std::map<std::string, ObjectPtr> previous;
  for (const ObjectPtr& o : old_objects) previous[ObjectKey(*o)] = o;
  for (const auto& [key, obj] : fresh) {
    auto it = previous.find(key);
    for (auto& h : handlers_) {
      if (it == previous.end()) {
        if (h.on_add) h.on_add(obj);
      } else if (h.on_update) {
        h.on_update(it->second, obj);
      }
    }
  }
  *resource_version = rv;
  ++list_count_;
  synced_ = true;
  LogDebug("informer listed", {{"informer", name_},
                               {"objects", absl::StrCat(objects.size())},
                               {"resourceVersion", rv},
                               {"encoding", decoded ? "protobuf" : "json"}});
  return absl::OkStatus();
}

absl::Status Informer::WatchFrom(std::string* resource_version, int* events) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  kube::ListOptions options;
  options.label_selector = options_.label_selector;
  options.resource_version = *resource_version;
  options.allow_bookmarks = true;
  options.decoder = options_.decode_protobuf;
  // Short watches: the server ends each after 20-30 s (spread so informers do not reconnect
  // together), so the client's idle limit (timeout + a few seconds) notices a half-open
  // connection within about half a minute. Reconnecting from the last resourceVersion (kept
  // fresh by bookmarks) is served from the API server's watch cache.
  options.timeout_seconds =
      kWatchTimeoutSeconds + static_cast<int>(rng() % kWatchTimeoutSpreadSeconds);
  absl::StatusOr<std::unique_ptr<kube::WatchStream>> stream =
      client_->Watch(options_.resource, options_.namespace_name, options);
  if (!stream.ok()) return stream.status();
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return absl::CancelledError("stopped");
    current_ = stream->get();
  }
  kube::WatchEvent event;
  while ((*stream)->Next(&event)) {
    ++*events;
    std::string rv = event.object.value("/metadata/resourceVersion"_json_pointer, "");
    if (event.type == kube::WatchEvent::Type::kBookmark) {
      if (!rv.empty()) *resource_version = rv;
      continue;
    }
    ObjectPtr obj = Prepare(std::move(event.object), event.decoded);
    if (event.type == kube::WatchEvent::Type::kDeleted) {
      ObjectPtr old = store_.Remove(ObjectKey(*obj));
      for (auto& h : handlers_)
        if (h.on_delete) h.on_delete(old ? old : obj);
    } else {
      ObjectPtr old = store_.Upsert(obj);
      for (auto& h : handlers_) {
        if (old == nullptr) {
          if (h.on_add) h.on_add(obj);
        } else if (h.on_update) {
          h.on_update(old, obj);
        }
      }
    }
    if (!rv.empty()) *resource_version = rv;
  }
  absl::Status status = (*stream)->status();
  absl::MutexLock lock(&mu_);
  current_ = nullptr;
  return status;
}

void Informer::Run() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  Backoff backoff(kInitialBackoff, kMaxBackoff);
  std::string rv;
  bool need_list = true;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return;
    }
    absl::Status status;
    if (need_list) {
      status = ListAndReplace(&rv);
      if (status.ok()) need_list = false;
    } else {
      const absl::Time start = absl::Now();
      int events = 0;
      status = WatchFrom(&rv, &events);
      // A watch that delivered events or lived a while was healthy: the error that ended it
      // starts a fresh backoff, so a flaky network costs short pauses, never the cap forever.
      if (events > 0 || absl::Now() - start >= kHealthyWatch) backoff.Reset();
      if (kube::IsGone(status)) {
        LogInfo("watch expired, listing again", {{"informer", name_}, {"resourceVersion", rv}});
        need_list = true;
        continue;
      }
    }
    if (status.ok()) {
      backoff.Reset();
      continue;
    }
    if (status.code() == absl::StatusCode::kCancelled) return;
    // Jittered (0.8-1.2x) so the informers of many operators do not retry in step.
    const absl::Duration wait = backoff.Next() * (0.8 + 0.4 * (rng() % 1000) / 1000.0);
    LogWarning("informer error, retrying", {{"informer", name_},
                                            {"error", status.ToString()},
                                            {"backoff", absl::FormatDuration(wait)}});
    if (!SleepUnlessStopped(wait)) return;
  }
}

}  // namespace disttrain::runtime
