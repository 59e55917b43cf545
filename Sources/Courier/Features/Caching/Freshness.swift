import Foundation

/// Age and freshness of a stored response at a given instant (RFC 9111 §4.2), plus the stale
/// windows of RFC 5861. All durations are in seconds.
struct Freshness: Sendable, Equatable {
    /// `current_age` (§4.2.3).
    let age: TimeInterval
    /// `freshness_lifetime` (§4.2.1).
    let lifetime: TimeInterval
    /// `true` when the lifetime came from the heuristic of §4.2.2 rather than from the server.
    let isHeuristic: Bool

    /// Seconds the response stays fresh; negative once stale.
    var remaining: TimeInterval { lifetime - age }
    /// `response_is_fresh = freshness_lifetime > current_age` (§4.2).
    var isFresh: Bool { lifetime > age }
    /// How long the response has been stale (0 while fresh).
    var staleness: TimeInterval { max(0, age - lifetime) }

    /// Computes the freshness of `entry` at `now`.
    ///
    /// - Parameters:
    ///   - entry: The stored response.
    ///   - now: The cache's current time.
    ///   - heuristicFraction: Fraction of the `Last-Modified` age used as heuristic lifetime
    ///     (§4.2.2 suggests 10 %).
    ///   - maxHeuristicLifetime: Cap on a heuristic lifetime, in seconds.
    init(of entry: CachedResponse, at now: Date, heuristicFraction: Double, maxHeuristicLifetime: TimeInterval) {
        let headers = entry.headers
        let control = CacheControl(headers)
        let date = headers.cacheValue("date").flatMap(HeaderScanning.date)
        // The time the response was generated; without a Date, the time it was received (§4.2.3 uses
        // `date_value`; a recipient must add one if missing, RFC 9110 §6.6.1).
        let dateValue = date ?? entry.responseTime

        // §4.2.3 age calculation.
        let ageValue = TimeInterval(Self.ageValue(headers))
        let apparentAge = max(0, entry.responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, entry.responseTime.timeIntervalSince(entry.requestTime))
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(entry.responseTime))
        age = correctedInitialAge + residentTime

        // §4.2.1 freshness lifetime; s-maxage applies to shared caches only.
        if control.has("max-age") {
            lifetime = TimeInterval(control.maxAge ?? 0)
            isHeuristic = false
        } else if let expiresText = headers.cacheValue("expires") {
            // An invalid Expires (e.g. "0", a malformed date, or the field repeated: it is a
            // singleton, so two values are one invalid value) means already expired (§5.3).
            let values = headers.cacheValues("expires")
            let expires = values.count == 1 ? HeaderScanning.date(expiresText) : nil
            lifetime = expires.map { max(0, $0.timeIntervalSince(dateValue)) } ?? 0
            isHeuristic = false
        } else if Self.allowsHeuristic(entry, control),
            let lastModified = headers.cacheValue("last-modified").flatMap(HeaderScanning.date)
        {
            // §4.2.2: a fraction of the interval since Last-Modified, capped.
            let sinceModified = max(0, dateValue.timeIntervalSince(lastModified))
            lifetime = min(sinceModified * heuristicFraction, maxHeuristicLifetime)
            isHeuristic = true
        } else {
            lifetime = 0
            isHeuristic = false
        }
    }

    /// Statuses "heuristically cacheable" by default (RFC 9110 §15.1): a cache may assign them a
    /// heuristic lifetime when the response has no explicit one.
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// §4.2.2: heuristics only for heuristically cacheable statuses or responses marked `public`.
    static func allowsHeuristic(_ entry: CachedResponse, _ control: CacheControl) -> Bool {
        heuristicallyCacheableStatuses.contains(entry.statusCode) || control.isPublic
    }

    /// The `Age` of `headers` in seconds (§5.1): the first member when the field is a list or
    /// repeated (`Age: 7200, 0` is 7200), without parameters (`7200;foo=bar` is 7200); 0 when absent
    /// or invalid (negative, fractional, not a number), since an invalid `Age` is ignored.
    static func ageValue(_ headers: HTTPHeaders) -> Int {
        guard let first = headers.cacheValues("age").first else { return 0 }
        let member = first.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let value = member.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return deltaSeconds(String(value)) ?? 0
    }

    /// Parses a delta-seconds field value such as `Age: 30`; `nil` when invalid. A value above
    /// 2147483648 is 2147483648 (RFC 9111 §1.2.2), as ``CacheControl`` reads `max-age`.
    static func deltaSeconds(_ text: String) -> Int? {
        let trimmed = HeaderScanning.trim(text)
        guard !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(trimmed).map { min($0, 2_147_483_648) } ?? 2_147_483_648
    }
}
