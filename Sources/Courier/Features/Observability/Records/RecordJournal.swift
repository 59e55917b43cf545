import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the logging interceptors of one call saw, redacted only when someone reads it.
///
/// Each pass through a ``LoggingInterceptor`` appends the request it saw, then the response or
/// the error. A record is built the first time it is needed — a logger that will write the entry
/// at its level, a recorder, or ``RequestContext/requestRecord`` and its siblings — and kept.
/// Building one entry first builds every earlier entry, in the order they were appended, so the
/// secret values learned on the way (a token hidden in the request is also hidden in the response
/// and in error messages) are exactly those of building every record at once, as it happens.
final class RecordJournal: Sendable {
    /// What every record of the call shares.
    struct Call: Sendable {
        let requestID: RequestID
        let method: HTTPMethod
        let pathTemplate: String
    }

    /// What a pass saw, with what the record needs from that moment.
    enum Entry: Sendable {
        case request(URLRequest, RecordBuilder, attempt: Int, timestamp: Date)
        case response(HTTPResponse, RecordBuilder, attempt: Int, duration: Duration)
        case error(any Error, RecordBuilder, attempt: Int, duration: Duration)

        /// The builder of the entry's record.
        var builder: RecordBuilder {
            switch self {
            case .request(_, let builder, _, _), .response(_, let builder, _, _), .error(_, let builder, _, _): builder
            }
        }
    }

    /// A built record.
    enum Record: Sendable {
        case request(RequestRecord)
        case response(ResponseRecord)
        case error(ErrorRecord)
    }

    /// How far an entry got: learned (its secrets are known, its record can be rendered later
    /// exactly as it would have been now) or built.
    private enum Progress: Sendable {
        case learned(RecordBuilder.Learned)
        case built(Record)
    }

    private struct State: Sendable {
        // Room for the usual call — a request and its response — in one allocation each.
        var entries: [Entry] = Self.reserved(2)
        var progress: [Progress] = Self.reserved(2)
        var secrets = SecretValues()
        /// The last URL redacted, reused for the next entry with the same URL.
        var lastURL: RecordBuilder.RedactedURL?

        private static func reserved<Element>(_ count: Int) -> [Element] {
            var array: [Element] = []
            array.reserveCapacity(count)
            return array
        }
    }

    let call: Call
    private let state = Locked(State())

    init(call: Call) { self.call = call }

    /// Appends what a pass saw and returns its position; redacts nothing.
    func append(_ entry: Entry) -> Int {
        state.withLock { state in
            state.entries.append(entry)
            return state.entries.count - 1
        }
    }

    /// The record of the entry at `index`, learning every earlier entry first.
    func record(at index: Int) -> Record {
        state.withLock { state in
            learn(upTo: index, &state)
            switch state.progress[index] {
            case .built(let record):
                return record
            case .learned(let learned):
                let record = render(state.entries[index], learned)
                state.progress[index] = .built(record)
                return record
            }
        }
    }

    /// What a summary log line of the response at `index` shows, without rendering header fields,
    /// under one lock: the redacted URL its record shows (the request's at `requestIndex` when it
    /// has none), and the call's path template scrubbed of every secret learned up to `index`, as
    /// the records show it — a call without a template is named by its path, which may hold a
    /// secret the exchange shows elsewhere (`/reset/<the token also sent as ?token=>`).
    func summary(at index: Int, request requestIndex: Int) -> (url: String, pathTemplate: String) {
        state.withLock { state in
            learn(upTo: max(index, requestIndex), &state)
            let redactor = state.entries[index].builder.redactor
            // A response without a URL shows its request's, scrubbed of what the response taught
            // too (a `Set-Cookie` value that also sits in the request's path).
            let url =
                Self.url(of: state.progress[index])
                ?? Self.url(of: state.progress[requestIndex]).map { redactor.scrub($0, secrets: state.secrets) } ?? ""
            return (url, redactor.scrub(call.pathTemplate, secrets: state.secrets))
        }
    }

    private static func url(of progress: Progress) -> String? {
        switch progress {
        case .learned(let learned): learned.url
        case .built(.request(let record)): record.url
        case .built(.response(let record)): record.url
        case .built(.error): nil
        }
    }

    /// Learns the entries up to `index`, in order: body previews (``LoggingPolicy/debugSafe``)
    /// learn as they render, so those records are built at once.
    private func learn(upTo index: Int, _ state: inout State) {
        while state.progress.count <= index {
            let progress: Progress
            switch state.entries[state.progress.count] {
            case .request(let request, let builder, let attempt, let timestamp):
                if builder.includesBodies {
                    progress = .built(
                        .request(
                            builder.request(
                                request, call: call, attempt: attempt, timestamp: timestamp, secrets: &state.secrets)))
                } else {
                    progress = .learned(builder.learn(request, secrets: &state.secrets, lastURL: &state.lastURL))
                }
            case .response(let response, let builder, let attempt, let duration):
                if builder.includesBodies {
                    progress = .built(
                        .response(
                            builder.response(
                                response, call: call, attempt: attempt, duration: duration, secrets: &state.secrets)))
                } else {
                    progress = .learned(builder.learn(response, secrets: &state.secrets, lastURL: &state.lastURL))
                }
            case .error:
                progress = .learned(
                    RecordBuilder.Learned(url: nil, secrets: state.secrets))
            }
            state.progress.append(progress)
        }
    }

    private func render(_ entry: Entry, _ learned: RecordBuilder.Learned) -> Record {
        switch entry {
        case .request(let request, let builder, let attempt, let timestamp):
            return .request(builder.render(learned, of: request, call: call, attempt: attempt, timestamp: timestamp))
        case .response(let response, let builder, let attempt, let duration):
            return .response(builder.render(learned, of: response, call: call, attempt: attempt, duration: duration))
        case .error(let error, let builder, let attempt, let duration):
            return .error(builder.error(error, call: call, attempt: attempt, duration: duration, secrets: learned.secrets))
        }
    }

    /// How many entries were redacted so far (learned or built), from the first on.
    var redactedCount: Int { state.withLock { $0.progress.count } }

    /// The record at `index` when it is a `Kind` (``RequestRecord``, ``ResponseRecord`` or
    /// ``ErrorRecord``); `nil` when the entry there is of another kind.
    func record<Kind>(at index: Int, as _: Kind.Type) -> Kind? {
        switch record(at: index) {
        case .request(let record): record as? Kind
        case .response(let record): record as? Kind
        case .error(let record): record as? Kind
        }
    }
}

/// A record slot's content: a record set by hand, or one the call's journal builds when read.
enum RecordSlot<Record: Sendable>: Sendable {
    case built(Record)
    case pending(RecordJournal, Int)
}

extension RecordSlot {
    /// The record: the one set by hand, or the one the journal builds for its entry (redacted
    /// when first read).
    var record: Record? {
        switch self {
        case .built(let record): record
        case .pending(let journal, let index): journal.record(at: index, as: Record.self)
        }
    }
}
