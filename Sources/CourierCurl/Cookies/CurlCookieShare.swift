#if canImport(CCurl)
import CCurl
import Foundation

/// The cookie store of one transport: a libcurl share handle holding cookies
/// (`CURL_LOCK_DATA_COOKIE`) that every easy handle of that transport attaches to. A cookie file
/// of `""` per easy handle would give each handle its own jar; the share gives the transport one,
/// and no other transport sees it.
final class CurlCookieShare: @unchecked Sendable {
    // @unchecked: libcurl calls the lock callbacks around every access to the shared data.
    let share: UnsafeMutableRawPointer
    private let locks: [NSLock]

    init?() {
        _ = CurlGlobal.initialized
        guard let share = curl_share_init() else { return nil }
        self.share = share
        // One lock per curl_lock_data value (CURL_LOCK_DATA_LAST bounds them).
        locks = (0..<Int(CURL_LOCK_DATA_LAST.rawValue)).map { _ in NSLock() }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        guard ccurl_share_setopt_pointer(share, CURLSHOPT_USERDATA, userdata) == CURLSHE_OK,
            ccurl_share_setopt_lock(share, Self.lock, Self.unlock) == CURLSHE_OK,
            ccurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue)) == CURLSHE_OK
        else {
            curl_share_cleanup(share)
            return nil
        }
    }

    deinit {
        curl_share_cleanup(share)
    }

    fileprivate func lock(_ data: curl_lock_data) {
        locks[min(Int(data.rawValue), locks.count - 1)].lock()
    }

    fileprivate func unlock(_ data: curl_lock_data) {
        locks[min(Int(data.rawValue), locks.count - 1)].unlock()
    }

    private static let lock: curl_lock_function = { _, data, _, userdata in
        guard let userdata else { return }
        Unmanaged<CurlCookieShare>.fromOpaque(userdata).takeUnretainedValue().lock(data)
    }

    private static let unlock: curl_unlock_function = { _, data, userdata in
        guard let userdata else { return }
        Unmanaged<CurlCookieShare>.fromOpaque(userdata).takeUnretainedValue().unlock(data)
    }
}
#endif
