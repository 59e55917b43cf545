#if canImport(CCurl)
import Courier
import Foundation

extension PinningPolicy {
    /// The `CURLOPT_PINNEDPUBLICKEY` value for `host`: `sha256//<base64>;sha256//<base64>…`, or
    /// `nil` when the host is not pinned or pinning is bypassed in this debug build.
    func curlPinnedPublicKey(for host: String) -> String? {
        guard !isBypassed, let entry = pins(for: host) else { return nil }
        return entry.pins.map { "sha256//" + $0.base64 }.sorted().joined(separator: ";")
    }
}
#endif
