import Foundation

/// The decoding step that follows the pipeline: the client decodes an accepted response after the
/// interceptors have returned, so an observer that describes the call (metrics, logs) defers its
/// record of a buffered response until the client says whether the body decoded.
extension RequestContext {
    /// Starts tracking the call's decoding (the client, before running the pipeline); every
    /// ``afterDecoding(_:)`` action from now on waits for ``finishDecoding(failure:)``.
    package func expectDecoding() {
        self[DecodingHooksKey.self] = DecodingHooks()
    }

    /// Runs `action` once the client has decoded the response — with the decoding error when the
    /// body did not fit the endpoint's `Response`, else `nil` — or at once (with `nil`) when no
    /// decoding is pending: a call sent without the client, a streamed call, or after the end.
    package func afterDecoding(_ action: @escaping @Sendable (_ failure: (any Error)?) -> Void) {
        guard let hooks = self[DecodingHooksKey.self], hooks.defer(action) else {
            action(nil)
            return
        }
    }

    /// Whether the client will decode `response` for this call: a buffered response whose status
    /// the call accepts, while decoding is expected.
    package func decodes(_ response: HTTPResponse) -> Bool {
        statusValidation != .none && statusValidation.accepts(response.statusCode) && response.body.isBuffered
            && self[DecodingHooksKey.self] != nil
    }

    /// Ends the decoding step and runs the deferred actions, in the order they were deferred (the
    /// client, on every path out of a call it started with ``expectDecoding()``).
    package func finishDecoding(failure: (any Error)?) {
        self[DecodingHooksKey.self]?.finish(failure: failure)
    }
}

/// The actions waiting for a call's decoding.
private final class DecodingHooks: Sendable {
    private struct State: Sendable {
        var actions: [@Sendable ((any Error)?) -> Void] = []
        var finished = false
    }

    private let state = Locked(State())

    /// Keeps `action`; `false` when decoding already finished.
    func `defer`(_ action: @escaping @Sendable ((any Error)?) -> Void) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            state.actions.append(action)
            return true
        }
    }

    func finish(failure: (any Error)?) {
        let actions = state.withLock { state -> [@Sendable ((any Error)?) -> Void] in
            guard !state.finished else { return [] }
            state.finished = true
            defer { state.actions = [] }
            return state.actions
        }
        for action in actions { action(failure) }
    }
}

private enum DecodingHooksKey: RequestContextKey {
    typealias Value = DecodingHooks
}
