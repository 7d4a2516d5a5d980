// The write-budget VFS (sqlite_limit_vfs.hpp).
#include "sqlite_limit_vfs.hpp"

namespace nvtxpp::capture {

namespace {

struct limit_file {
  sqlite3_file base;
  limit_vfs* owner;
  sqlite3_file* real() noexcept { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

limit_file* as_limit(sqlite3_file* f) noexcept { return reinterpret_cast<limit_file*>(f); }

int lf_close(sqlite3_file* f) {
  auto* r = as_limit(f)->real();
  return r->pMethods != nullptr ? r->pMethods->xClose(r) : SQLITE_OK;
}
int lf_read(sqlite3_file* f, void* p, int n, sqlite3_int64 off) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xRead(r, p, n, off);
}
int lf_write(sqlite3_file* f, void const* p, int n, sqlite3_int64 off) {
  auto* lf = as_limit(f);
  auto const size = static_cast<std::uint64_t>(n);
  if (lf->owner->written + size > lf->owner->budget) {
    return SQLITE_FULL;
  }
  lf->owner->written += size;
  auto* r = lf->real();
  return r->pMethods->xWrite(r, p, n, off);
}
int lf_truncate(sqlite3_file* f, sqlite3_int64 size) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xTruncate(r, size);
}
int lf_sync(sqlite3_file* f, int flags) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xSync(r, flags);
}
int lf_file_size(sqlite3_file* f, sqlite3_int64* size) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xFileSize(r, size);
}
int lf_lock(sqlite3_file* f, int lock) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xLock(r, lock);
}
int lf_unlock(sqlite3_file* f, int lock) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xUnlock(r, lock);
}
int lf_check_reserved(sqlite3_file* f, int* out) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xCheckReservedLock(r, out);
}
int lf_file_control(sqlite3_file* f, int op, void* arg) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xFileControl(r, op, arg);
}
int lf_sector_size(sqlite3_file* f) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xSectorSize(r);
}
int lf_device_characteristics(sqlite3_file* f) {
  auto* r = as_limit(f)->real();
  return r->pMethods->xDeviceCharacteristics(r);
}

// Version 1 methods only: no WAL, no memory mapping through this VFS.
sqlite3_io_methods const limit_io = {1,
                                     lf_close,
                                     lf_read,
                                     lf_write,
                                     lf_truncate,
                                     lf_sync,
                                     lf_file_size,
                                     lf_lock,
                                     lf_unlock,
                                     lf_check_reserved,
                                     lf_file_control,
                                     lf_sector_size,
                                     lf_device_characteristics,
                                     nullptr,
                                     nullptr,
                                     nullptr,
                                     nullptr,
                                     nullptr,
                                     nullptr};

int lv_open(sqlite3_vfs* vfs, char const* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* owner = static_cast<limit_vfs*>(vfs->pAppData);
  auto* lf = as_limit(f);
  lf->owner = owner;
  lf->base.pMethods = nullptr;
  int const rc = owner->real->xOpen(owner->real, name, lf->real(), flags, out_flags);
  if (rc == SQLITE_OK) {
    lf->base.pMethods = &limit_io;
  }
  return rc;
}
int lv_delete(sqlite3_vfs* vfs, char const* name, int sync_dir) {
  auto* real = static_cast<limit_vfs*>(vfs->pAppData)->real;
  return real->xDelete(real, name, sync_dir);
}
int lv_access(sqlite3_vfs* vfs, char const* name, int flags, int* out) {
  auto* real = static_cast<limit_vfs*>(vfs->pAppData)->real;
  return real->xAccess(real, name, flags, out);
}
int lv_full_pathname(sqlite3_vfs* vfs, char const* name, int n, char* out) {
  auto* real = static_cast<limit_vfs*>(vfs->pAppData)->real;
  return real->xFullPathname(real, name, n, out);
}
int lv_randomness(sqlite3_vfs* vfs, int n, char* out) {
  auto* real = static_cast<limit_vfs*>(vfs->pAppData)->real;
  return real->xRandomness(real, n, out);
}
int lv_sleep(sqlite3_vfs* vfs, int us) {
  auto* real = static_cast<limit_vfs*>(vfs->pAppData)->real;
  return real->xSleep(real, us);
}
int lv_current_time(sqlite3_vfs* vfs, double* out) {
  auto* real = static_cast<limit_vfs*>(vfs->pAppData)->real;
  return real->xCurrentTime(real, out);
}
int lv_last_error(sqlite3_vfs* vfs, int n, char* out) {
  auto* real = static_cast<limit_vfs*>(vfs->pAppData)->real;
  return real->xGetLastError != nullptr ? real->xGetLastError(real, n, out) : 0;
}

}  // namespace

void init_limit_vfs(limit_vfs& v) {
  v.real = sqlite3_vfs_find(nullptr);
  v.vfs.iVersion = 1;
  v.vfs.szOsFile = static_cast<int>(sizeof(limit_file)) + v.real->szOsFile;
  v.vfs.mxPathname = v.real->mxPathname;
  v.vfs.zName = v.name.c_str();
  v.vfs.pAppData = &v;
  v.vfs.xOpen = lv_open;
  v.vfs.xDelete = lv_delete;
  v.vfs.xAccess = lv_access;
  v.vfs.xFullPathname = lv_full_pathname;
  v.vfs.xRandomness = lv_randomness;
  v.vfs.xSleep = lv_sleep;
  v.vfs.xCurrentTime = lv_current_time;
  v.vfs.xGetLastError = lv_last_error;
}

}  // namespace nvtxpp::capture
