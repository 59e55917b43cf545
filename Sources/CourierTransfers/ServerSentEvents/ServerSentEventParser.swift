import Courier
import Foundation

/// An incremental, byte-level parser of `text/event-stream` bodies (WHATWG HTML §9.2.5 "Parsing an
/// event stream" and §9.2.6 "Interpreting an event stream"): feed it chunks as they arrive, in any
/// split, and it returns the events each chunk completes.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for try await chunk in body {                  // any AsyncSequence of Data
///     for event in try parser.parse(chunk) { handle(event) }
/// }
/// parser.finish()                                // an unterminated last event is discarded
/// ```
///
/// The rules, all independent of how the bytes are split into chunks:
/// - One UTF-8 byte order mark at the very start of a stream is dropped; field values are decoded
///   as UTF-8, invalid sequences becoming U+FFFD.
/// - Lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the
///   next are one line end). A blank line dispatches the event.
/// - A line starting with `:` is a comment. Otherwise the field name runs up to the first `:`
///   and one space after it is dropped from the value; a line without `:` is a field with an empty
///   value. Unknown field names are ignored; names are case-sensitive.
/// - `event` sets the type (`message` when empty or absent); `data` lines are joined with LF;
///   `id` sets the last event ID unless the value contains U+0000 (an empty `id` resets it);
///   `retry` sets the reconnection time in milliseconds when the value is ASCII digits only,
///   otherwise it is ignored.
/// - A block without `data` dispatches nothing (its `id` still becomes the last event ID).
///
/// The parser is a value type with no locks; use one per stream (or per reconnecting feed: call
/// ``finish()`` between connections to keep ``lastEventID`` and ``reconnectionTime``).
public struct ServerSentEventParser: Sendable {
    /// The stream's last event ID string: set from the `id` fields when an event block ends, and
    /// what `Last-Event-ID` carries on the next connection (WHATWG HTML §9.2.4). Kept by ``finish()``.
    public private(set) var lastEventID: String
    /// The reconnection time from the most recent valid `retry` field, `nil` before any. Kept by
    /// ``finish()``.
    public private(set) var reconnectionTime: Duration?
    /// The most bytes one event may hold while it is assembled (the pending line plus the `data`
    /// so far); beyond it ``parse(_:)`` throws ``ServerSentEventError/eventTooLarge(limit:)``.
    public let maximumEventSize: Int

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var eventType = ""
    private var lastEventIDBuffer: String
    private var pendingRetry: Duration?
    /// The previous chunk ended with CR: an LF starting this one belongs to that line end.
    private var skipsLineFeed = false
    /// How many bytes of a leading byte order mark have been matched; nil once past the start.
    private var byteOrderMarkMatched: Int? = 0
    /// The rest of an event that grew too large is skipped, up to the blank line that ends it.
    private var skipsEvent = false
    /// While skipping: the current line has bytes (so its end is no blank line).
    private var skippedLineHasBytes = false
    /// The failure found after events the same call returned: thrown by the next call.
    private var deferredFailure: ServerSentEventError?
    /// Bytes after a failure, parsed by the call after the one that throws it.
    private var carried: [UInt8] = []

    /// Creates a parser.
    /// - Parameters:
    ///   - lastEventID: The last event ID to start from (one saved from an earlier session); `""`
    ///     by default.
    ///   - maximumEventSize: The most bytes one event may hold while it is assembled, in bytes
    ///     (at least 1); 1 MiB by default.
    public init(lastEventID: String = "", maximumEventSize: Int = 1 << 20) {
        self.lastEventID = lastEventID
        self.lastEventIDBuffer = lastEventID
        self.maximumEventSize = max(1, maximumEventSize)
    }

    /// Parses the next chunk of the stream.
    /// - Parameter chunk: The bytes that follow the previous chunk; any length, including empty.
    /// - Returns: The events this chunk completed, in stream order (often none).
    /// - Throws: ``ServerSentEventError/eventTooLarge(limit:)`` when an event grows beyond
    ///   ``maximumEventSize``. The events completed before it are returned first: the call that
    ///   finds the oversized event returns them and the next call throws. The rest of that event,
    ///   up to the blank line that ends it, is skipped; the bytes after it are parsed by the call
    ///   after the throw (at the end of a stream, pass an empty chunk), none lost.
    public mutating func parse(_ chunk: Data) throws -> [ServerSentEvent] {
        if let failure = deferredFailure {
            deferredFailure = nil
            carried.append(contentsOf: chunk)
            throw failure
        }
        var events: [ServerSentEvent] = []
        var failure: ServerSentEventError?
        if carried.isEmpty {
            chunk.withUnsafeBytes { consume($0, into: &events, failure: &failure) }
        } else {
            var input = carried
            carried = []
            input.append(contentsOf: chunk)
            input.withUnsafeBytes { consume($0, into: &events, failure: &failure) }
        }
        if let failure {
            guard events.isEmpty else {
                deferredFailure = failure
                return events
            }
            throw failure
        }
        return events
    }

    /// Whether a failure waits to be thrown by the next ``parse(_:)`` (the call that found it
    /// returned the events before it): a reader whose stream ends now reports it itself.
    package var hasDeferredFailure: Bool { deferredFailure != nil }

    /// Ends the current stream: an event not yet terminated by a blank line is discarded (WHATWG
    /// HTML §9.2.6: pending data at the end of the stream is not dispatched), and the parser is
    /// ready for the next connection's stream (a byte order mark allowed again). ``lastEventID``
    /// and ``reconnectionTime`` are kept, as an `EventSource` keeps them across reconnects.
    /// - Returns: `true` when something incomplete was discarded.
    @discardableResult
    public mutating func finish() -> Bool {
        let discarded = !line.isEmpty || !data.isEmpty || !eventType.isEmpty || lastEventIDBuffer != lastEventID
        discardPendingEvent()
        skipsLineFeed = false
        byteOrderMarkMatched = 0
        skipsEvent = false
        skippedLineHasBytes = false
        deferredFailure = nil
        carried = []
        return discarded
    }

    private mutating func discardPendingEvent() {
        line.removeAll(keepingCapacity: true)
        data.removeAll(keepingCapacity: true)
        eventType = ""
        lastEventIDBuffer = lastEventID
        pendingRetry = nil
    }

    // MARK: Lines

    /// Consumes `raw`, appending the events it completes. On an event that grows too large it
    /// sets `failure`, starts skipping that event, keeps the bytes after the line that overflowed
    /// in ``carried`` for the next call, and returns.
    private mutating func consume(
        _ raw: UnsafeRawBufferPointer, into events: inout [ServerSentEvent], failure: inout ServerSentEventError?
    ) {
        var start = 0
        if let matched = byteOrderMarkMatched {
            start = consumeByteOrderMark(raw, matched: matched)
            guard byteOrderMarkMatched == nil else { return }  // the chunk ended inside a possible BOM
        }
        if skipsLineFeed, start < raw.count {
            skipsLineFeed = false
            if raw[start] == .lineFeed { start += 1 }
        }
        var index = start
        while index < raw.count {
            var end = index
            while end < raw.count, raw[end] != .lineFeed, raw[end] != .carriageReturn { end += 1 }
            let piece = UnsafeRawBufferPointer(rebasing: raw[index..<end])
            if skipsEvent {
                // The rest of an oversized event: lines are dropped until a blank one ends it.
                guard end < raw.count else {
                    skippedLineHasBytes = skippedLineHasBytes || !piece.isEmpty
                    return
                }
                if !skippedLineHasBytes, piece.isEmpty { skipsEvent = false }
                skippedLineHasBytes = false
            } else {
                guard fits(adding: piece.count) else {
                    // Everything pending belongs to the oversized event: dropped, and so is the
                    // rest of it; what follows the overflowing line waits for the next call.
                    failure = .eventTooLarge(limit: maximumEventSize)
                    discardPendingEvent()
                    skipsEvent = true
                    skippedLineHasBytes = end == raw.count || !piece.isEmpty
                    if end < raw.count {
                        var next = end + 1
                        if raw[end] == .carriageReturn {
                            if next < raw.count {
                                if raw[next] == .lineFeed { next += 1 }
                            } else {
                                skipsLineFeed = true
                            }
                        }
                        skippedLineHasBytes = false
                        carried = Array(UnsafeRawBufferPointer(rebasing: raw[next...]))
                    }
                    return
                }
                guard end < raw.count else {
                    line.append(contentsOf: piece)
                    return
                }
                if line.isEmpty {
                    process(line: piece, into: &events)
                } else {
                    var pending = line
                    line = []
                    pending.append(contentsOf: piece)
                    pending.withUnsafeBytes { process(line: $0, into: &events) }
                    pending.removeAll(keepingCapacity: true)
                    line = pending
                }
            }
            if raw[end] == .carriageReturn {
                if end + 1 < raw.count {
                    if raw[end + 1] == .lineFeed { end += 1 }
                } else {
                    skipsLineFeed = true
                }
            }
            index = end + 1
        }
    }

    /// Matches the start of the stream against EF BB BF; returns the index of the first byte
    /// after it. A partial match that fails is fed back as ordinary bytes.
    private mutating func consumeByteOrderMark(_ raw: UnsafeRawBufferPointer, matched: Int) -> Int {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        var matched = matched
        var index = 0
        while index < raw.count, matched < mark.count {
            guard raw[index] == mark[matched] else {
                // Not a BOM: the bytes held back so far are data (none of them ends a line).
                line.append(contentsOf: mark[..<matched])
                byteOrderMarkMatched = nil
                return index
            }
            matched += 1
            index += 1
        }
        byteOrderMarkMatched = matched == mark.count ? nil : matched
        return index
    }

    /// Whether `count` more bytes keep the event within ``maximumEventSize``.
    private func fits(adding count: Int) -> Bool {
        line.count + data.count + count <= maximumEventSize
    }

    // MARK: Fields

    private mutating func process(line: UnsafeRawBufferPointer, into events: inout [ServerSentEvent]) {
        guard let first = line.first else {
            if let event = dispatch() { events.append(event) }
            return
        }
        if first == .colon { return }  // a comment
        let colon = line.firstIndex(of: .colon) ?? line.count
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        var valueStart = Swift.min(colon + 1, line.count)
        if valueStart < line.count, line[valueStart] == .space { valueStart += 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        switch Field(name) {
        case .event:
            eventType = String(decoding: value, as: UTF8.self)
        case .data:
            data.append(contentsOf: value)
            data.append(.lineFeed)
        case .id:
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        case .retry:
            if let milliseconds = Self.milliseconds(value) {
                reconnectionTime = .milliseconds(milliseconds)
                pendingRetry = reconnectionTime
            }
        case nil:
            break
        }
    }

    /// WHATWG HTML §9.2.6 "dispatch the event".
    private mutating func dispatch() -> ServerSentEvent? {
        lastEventID = lastEventIDBuffer
        defer {
            data.removeAll(keepingCapacity: true)
            eventType = ""
        }
        guard !data.isEmpty else { return nil }
        data.removeLast()  // the LF after the last data line
        let event = ServerSentEvent(
            type: eventType.isEmpty ? "message" : eventType, data: String(decoding: data, as: UTF8.self),
            lastEventID: lastEventID, retry: pendingRetry)
        pendingRetry = nil
        return event
    }

    /// A `retry` value: ASCII digits only (at least one), saturating at `Int64.max`.
    private static func milliseconds(_ value: UnsafeRawBufferPointer) -> Int64? {
        guard !value.isEmpty else { return nil }
        var result: Int64 = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowTimes) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            result = overflowTimes || overflowSum ? .max : sum
        }
        return result
    }
}

/// The field names §9.2.6 knows, matched byte for byte (case-sensitive).
private enum Field {
    case event, data, id, retry

    init?(_ name: UnsafeRawBufferPointer) {
        switch name.count {
        case 2 where name.elementsEqual("id".utf8): self = .id
        case 4 where name.elementsEqual("data".utf8): self = .data
        case 5 where name.elementsEqual("event".utf8): self = .event
        case 5 where name.elementsEqual("retry".utf8): self = .retry
        default: return nil
        }
    }
}

extension UInt8 {
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let space = UInt8(ascii: " ")
}
