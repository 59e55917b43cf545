import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A `Transport` that answers from a HAR fixture (written by ``HARFixtureRecorder``) with strict
/// matching, offline: a request gets a recorded response only when method, path, query and the
/// digest of its redacted body all match.
///
/// ```swift
/// let replay = try ReplayTransport(contentsOf: URL(fileURLWithPath: "Fixtures/items.har"))
/// let client = APIClient(environment: .stub) { $0.transport = replay }
/// let item = try await client.send(GetItem(id: 42))
/// #expect(replay.unusedEntries.isEmpty, "\(replay.unusedEntriesReport)")
/// ```
///
/// - The **path** is compared with the entry's path template (`_pathTemplate`) against the end of
///   the request's path, so a fixture recorded under one base URL replays under another and
///   `{id}` segments match any value (``PathMatching/template``): `GetItem(id: 7)` gets the entry
///   recorded for `GetItem(id: 42)` when no closer one exists, and the host is not compared.
///   ``PathMatching/exact`` compares the whole recorded path — use it when a test must tell
///   resources apart.
/// - The **query** is compared as the set of its redacted parameters (order does not matter);
///   the **body** by the SHA-256 of its redacted text — both redacted by ``redactor``, so secrets
///   that differ between recording and replay do not break a match.
/// - Each entry answers once. ``Order/inOrder`` expects the requests in recorded order;
///   ``Order/byMatch`` takes the first unused matching entry.
///
/// A request without a match throws ``ReplayMismatch`` (a readable diff against the closest
/// entry), also kept in ``mismatches`` for requests whose error the code under test swallows.
public final class ReplayTransport: Transport {
    /// How requests are paired with entries.
    public enum Order: Sendable, Hashable {
        /// The next request must match the first entry not used yet.
        case inOrder
        /// A request takes the first unused entry it matches, wherever it is.
        case byMatch
    }

    /// How a request's path is compared with an entry's.
    public enum PathMatching: Sendable, Hashable {
        /// Against the recorded path template at the end of the request's path (`{name}` matches
        /// any segment); the recorded path when the entry has no template.
        case template
        /// The whole path, as recorded.
        case exact
    }

    private struct State: Sendable {
        var used: Set<Int> = []
        var mismatches: [ReplayMismatch] = []
    }

    /// Every recorded entry, in file order.
    public let entries: [ReplayEntry]
    /// How requests are paired with entries.
    public let order: Order
    /// The redactor used on live requests before comparing; use the one the fixture was recorded with.
    public let redactor: Redactor
    private let responses: [HTTPResponse?]
    private let matcher: ReplayMatcher
    private let state = Locked(State())

    /// A transport replaying `archive`.
    ///
    /// - Parameters:
    ///   - archive: The fixture.
    ///   - order: ``Order/byMatch`` by default.
    ///   - pathMatching: ``PathMatching/template`` by default.
    ///   - redactor: The redactor the fixture was recorded with; the default `Redactor`.
    public init(
        archive: HARLog, order: Order = .byMatch, pathMatching: PathMatching = .template, redactor: Redactor = Redactor()
    ) {
        let recorded = archive.entries
        self.entries = recorded.enumerated().map { index, entry in
            ReplayEntry(
                index: index, method: entry.request.method, url: entry.request.url,
                path: ReplayEntry.path(ofURLText: entry.request.url), pathTemplate: entry.pathTemplate,
                queryItems: entry.request.queryString.map { URLQueryItem(name: $0.name, value: $0.value) },
                bodyDigest: entry.request.bodyDigest, bodyText: entry.request.postData?.text,
                statusCode: entry.response.status)
        }
        self.responses = recorded.map(Self.response(of:))
        self.order = order
        self.redactor = redactor
        self.matcher = ReplayMatcher(pathMatching: pathMatching, marker: redactor.marker)
    }

    /// A transport replaying the HAR file at `url`.
    ///
    /// - Throws: The file system's error, or `DecodingError` when the file is not a HAR 1.2 archive.
    public convenience init(
        contentsOf url: URL, order: Order = .byMatch, pathMatching: PathMatching = .template, redactor: Redactor = Redactor()
    ) throws {
        let archive = try JSONDecoder().decode(HARLog.self, from: Data(contentsOf: url))
        self.init(archive: archive, order: order, pathMatching: pathMatching, redactor: redactor)
    }

    /// Answers `request` with the recorded response of its matching entry.
    ///
    /// - Throws: ``ReplayMismatch`` when no unused entry matches; `URLError(.networkConnectionLost)`
    ///   for an entry recorded without a response (status 0); `CancellationError` when cancelled.
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let key = ReplayRequestKey(request, redactor: redactor)
        let outcome: Result<Int, ReplayMismatch> = state.withLock { state in
            let result = pick(key, used: state.used)
            switch result {
            case .success(let index): state.used.insert(index)
            case .failure(let mismatch): state.mismatches.append(mismatch)
            }
            return result
        }
        let index = try outcome.get()
        guard var response = responses[index] else { throw URLError(.networkConnectionLost) }
        response.url = request.url
        return response
    }

    private func pick(_ key: ReplayRequestKey, used: Set<Int>) -> Result<Int, ReplayMismatch> {
        let unused = entries.filter { !used.contains($0.index) }
        switch order {
        case .inOrder:
            if let expected = unused.first {
                let comparison = matcher.compare(key, expected)
                if comparison.matches { return .success(expected.index) }
                let later = unused.dropFirst().first { matcher.compare(key, $0).matches }
                let note = later.map { "out of order: entry #\($0.index) matches, but #\(expected.index) comes first" }
                return .failure(mismatch(key, closest: expected, comparison: comparison, note: note))
            }
        case .byMatch:
            // Of the entries that match, the closest (the first in file order among equals).
            let matching = unused.filter { matcher.compare(key, $0).matches }
            if let best = matching.max(by: { matcher.closeness(key, $0).lexicographicallyPrecedes(matcher.closeness(key, $1)) }) {
                let closeness = matcher.closeness(key, best)
                if let first = matching.first(where: { matcher.closeness(key, $0) == closeness }) { return .success(first.index) }
            }
        }
        let candidates = unused.isEmpty ? entries : unused
        let closest = candidates.max { matcher.compare(key, $0).score < matcher.compare(key, $1).score }
        let usedMatch = entries.first { used.contains($0.index) && matcher.compare(key, $0).matches }
        let note = usedMatch.map { "entry #\($0.index) matches but was already used (each entry answers once)" }
        return .failure(mismatch(key, closest: closest, comparison: closest.map { matcher.compare(key, $0) }, note: note))
    }

    private func mismatch(
        _ key: ReplayRequestKey, closest: ReplayEntry?, comparison: ReplayMatcher.Comparison?, note: String?
    ) -> ReplayMismatch {
        ReplayMismatch(
            request: key.summary, closest: closest,
            description: ReplayDiff.text(key: key, closest: closest, comparison: comparison, note: note))
    }

    /// Every request that found no entry, in order.
    public var mismatches: [ReplayMismatch] { state.withLock { $0.mismatches } }

    /// The entries no request used, in file order: responses the recording saw that this run did
    /// not ask for.
    public var unusedEntries: [ReplayEntry] {
        let used = state.withLock { $0.used }
        return entries.filter { !used.contains($0.index) }
    }

    /// A readable list of ``unusedEntries`` (`2 recorded responses not used:` and one line each),
    /// or an empty string when every entry was used.
    public var unusedEntriesReport: String {
        let unused = unusedEntries
        guard !unused.isEmpty else { return "" }
        let noun = unused.count == 1 ? "response" : "responses"
        return (["\(unused.count) recorded \(noun) not used:"] + unused.map { "  \($0)" }).joined(separator: "\n")
    }

    static func response(of entry: HARLog.Entry) -> HTTPResponse? {
        guard entry.response.status > 0 else { return nil }
        let content = entry.response.content
        var body = Data()
        if let text = content.text {
            body = content.encoding == "base64" ? (Data(base64Encoded: text) ?? Data()) : Data(text.utf8)
        }
        let headers = HTTPHeaders(entry.response.headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
        return HTTPResponse(statusCode: entry.response.status, headers: headers, body: body)
    }
}
