/// A list of names whose values must never be logged: header names, query parameter names, JSON
/// keys or form field names.
///
/// Names are compared after *normalisation*: lower-cased, with every character that is not a
/// letter or a digit removed — so `X-API-Key`, `x_api_key` and `xApiKey` are the same name, and
/// `card_number`, `cardNumber` and `Card-Number` all match `cardnumber`.
///
/// A name matches when its normalised form equals one of ``exactNames`` or contains one of
/// ``fragments``. Fragments catch the many spellings of one secret (`access_token`,
/// `X-Refresh-Token`, `newPassword`); short or ambiguous words (`pin`, `otp`, `sid`) are exact
/// names, because as fragments they would match unrelated words (`shipping`, `footprint`).
///
/// ```swift
/// var names = RedactionList.defaultHeaders
/// names.insert("X-Device-Fingerprint")       // exact
/// names.insertFragment("signature")          // any name containing it
/// ```
public struct RedactionList: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// Normalised names that match exactly.
    public private(set) var exactNames: Set<String> {
        didSet { verdicts = Verdicts() }
    }
    /// Normalised fragments; a name containing any of them matches.
    public private(set) var fragments: Set<String> {
        didSet { verdicts = Verdicts() }
    }
    /// What ``matches(_:)`` answered for names seen before (the same few header names come with
    /// every request and response, and logging asks about each of them per call).
    private var verdicts = Verdicts()

    /// Creates a list from exact names and fragments, in any spelling (they are normalised).
    public init(exactNames: some Sequence<String> = [], fragments: some Sequence<String> = []) {
        self.exactNames = Set(exactNames.map(Self.normalise).filter { !$0.isEmpty })
        self.fragments = Set(fragments.map(Self.normalise).filter { !$0.isEmpty })
    }

    /// A list of exact names: `["X-Device-Id", "X-Signature"]`.
    public init(arrayLiteral elements: String...) {
        self.init(exactNames: elements)
    }

    /// Adds an exact name (any spelling).
    public mutating func insert(_ name: String) {
        let normalised = Self.normalise(name)
        if !normalised.isEmpty { exactNames.insert(normalised) }
    }

    /// Adds a fragment (any spelling): every name containing it will match.
    public mutating func insertFragment(_ fragment: String) {
        let normalised = Self.normalise(fragment)
        if !normalised.isEmpty { fragments.insert(normalised) }
    }

    /// Removes an exact name or fragment (any spelling), e.g. to log `token_type` again.
    public mutating func remove(_ name: String) {
        let normalised = Self.normalise(name)
        exactNames.remove(normalised)
        fragments.remove(normalised)
    }

    /// The union of two lists.
    public func union(_ other: RedactionList) -> RedactionList {
        var copy = self
        copy.exactNames.formUnion(other.exactNames)
        copy.fragments.formUnion(other.fragments)
        return copy
    }

    /// Two lists are equal when they have the same exact names and fragments.
    public static func == (lhs: RedactionList, rhs: RedactionList) -> Bool {
        lhs.exactNames == rhs.exactNames && lhs.fragments == rhs.fragments
    }

    /// Hashes the exact names and fragments.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(exactNames)
        hasher.combine(fragments)
    }

    /// Whether `name` must be redacted.
    public func matches(_ name: String) -> Bool {
        if let known = verdicts.verdict(for: name) { return known }
        let verdict = computeMatch(name)
        verdicts.remember(verdict, for: name)
        return verdict
    }

    private func computeMatch(_ name: String) -> Bool {
        var normalised = Self.normalise(name)
        guard !normalised.isEmpty else { return false }
        if exactNames.contains(normalised) { return true }
        // An ASCII name (every header name, nearly every key) is searched byte by byte, which
        // costs nanoseconds where `String.contains(_:)` costs microseconds. Exact: each of its
        // characters is one byte, and a fragment with a non-ASCII character is in neither.
        let found = normalised.withUTF8 { text -> Bool? in
            guard text.allSatisfy({ $0 < 0x80 }) else { return nil }
            return fragments.contains { fragment in
                var fragment = fragment
                return fragment.withUTF8 { Self.contains(text, $0) }
            }
        }
        return found ?? fragments.contains { normalised.contains($0) }
    }

    /// Whether the bytes `fragment` occur in `text`.
    static func contains(_ text: UnsafeBufferPointer<UInt8>, _ fragment: UnsafeBufferPointer<UInt8>) -> Bool {
        let length = fragment.count
        guard length > 0 else { return true }
        guard length <= text.count else { return false }
        let first = fragment[0]
        for start in 0...(text.count - length) where text[start] == first {
            var index = 1
            while index < length, text[start + index] == fragment[index] { index += 1 }
            if index == length { return true }
        }
        return false
    }

    /// Lower-cases `name` and keeps only its letters and digits.
    static func normalise(_ name: String) -> String {
        var name = name
        // ASCII (every header name, nearly every key): one pass over the bytes, one allocation.
        let ascii = name.withUTF8 { bytes -> String? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return String(unsafeUninitializedCapacity: bytes.count) { buffer in
                var count = 0
                for byte in bytes {
                    let lower = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
                    guard (0x61...0x7A).contains(lower) || (0x30...0x39).contains(lower) else { continue }
                    buffer[count] = lower
                    count += 1
                }
                return count
            }
        }
        if let ascii { return ascii }
        return String(
            String.UnicodeScalarView(
                name.lowercased().unicodeScalars.filter {
                    ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0.value > 0x7F
                }))
    }
}

extension RedactionList {
    /// Remembered verdicts of one list, up to ``capacity`` names (then new names are computed
    /// each time): a lookup is one lock and one hash of the name, against normalising it and
    /// searching it for every fragment.
    final class Verdicts: Sendable {
        static let capacity = 256
        private let known = Locked<[String: Bool]>([:])

        func verdict(for name: String) -> Bool? { known.withLock { $0[name] } }

        func remember(_ verdict: Bool, for name: String) {
            known.withLock { known in
                if known.count < Self.capacity { known[name] = verdict }
            }
        }
    }

    /// Fragments shared by every default list: credentials and payment data under any spelling.
    /// `token` also matches harmless names such as `token_type`; over-redaction is the safe side.
    static let secretFragments = [
        "password", "passwd", "passphrase", "secret", "token", "apikey", "authorization",
        "cookie", "credential", "privatekey", "cardnumber", "creditcard", "sessionid", "signature",
        // OAuth (RFC 7636 `code_verifier`, RFC 8628 `device_code`, RFC 7523 `client_assertion`)
        // and vendor API keys (`X-Auth-Key`, `Ocp-Apim-Subscription-Key`, `X-Functions-Key`).
        "codeverifier", "devicecode", "assertion", "authkey", "subscriptionkey", "functionskey",
        // Tokens and keys by other names (`jwt`, `bearer`, `accessKey`, `authCode`), bank account
        // numbers, and wallet recovery words (`recoveryPhrase`, `mnemonic`, `seedPhrase`).
        "jwt", "bearer", "accesskey", "authcode", "accountnumber", "recoveryphrase", "mnemonic", "seedphrase",
    ]

    /// Exact names too short or ambiguous to be fragments.
    static let secretExactNames = [
        "auth", "pin", "otp", "cvv", "cvc", "csc", "securitycode", "pan", "ssn", "sid", "session",
        "phone", "phonenumber", "mobile", "mobilenumber", "iban",
    ]

    /// Header names redacted by default: `Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie` (RFC 9110 §11.6.2, §11.7.2; RFC 6265 §4), and any name containing `token`,
    /// `secret`, `api-key`, `password`, `session-id`, `signature`… (`X-API-Key`, `X-Refresh-Token`,
    /// `X-Amz-Security-Token`).
    ///
    /// Not redacted: `Idempotency-Key` and `X-Request-ID` — they identify an operation, grant no
    /// access, and are what you need to correlate client and server logs.
    public static let defaultHeaders = RedactionList(
        exactNames: ["authorization", "proxy-authorization", "cookie", "set-cookie"] + secretExactNames,
        fragments: secretFragments)

    /// Query parameter names redacted by default: `access_token` (RFC 6750 §2.3), `refresh_token`,
    /// `token`, `api_key`, `password`, `client_secret`, `signature`, `sid`, `session`… plus the
    /// shared payment and phone names.
    public static let defaultQueryParameters = RedactionList(
        exactNames: secretExactNames + ["code", "key", "sig"],
        fragments: secretFragments)

    /// JSON keys (at any depth) and form field names redacted by default: `password`, `token`,
    /// `access_token`, `refresh_token`, `id_token`, `client_secret`, `secret`, `phone`,
    /// `card_number`, `cvv`, `pin`, `otp`, `iban`…
    public static let defaultBodyFields = RedactionList(
        exactNames: secretExactNames,
        fragments: secretFragments)
}
