import Foundation

/// The decoding step that follows the pipeline: the client decodes an accepted response after the
/// interceptors have returned, so an observer that describes the call (metrics, logs) defers its
/// record of a buffered response until the client says whether the body decoded.
extension RequestContext {
    /// Starts tracking the call's decoding (the client, before running the pipeline); every
    /// ``afterDecoding(_:)`` action from now on waits for ``finishDecoding(failure:)``.
    package func expectDecoding() {
        withDecodingHooks { $0 = DecodingHooks() }
    }

    /// Runs `action` once the client has decoded the response — with the decoding error when the
    /// body did not fit the endpoint's `Response`, else `nil` — or at once (with `nil`) when no
    /// decoding is pending: a call sent without the client, a streamed call, or after the end.
    package func afterDecoding(_ action: @escaping @Sendable (_ failure: (any Error)?) -> Void) {
        let deferred = withDecodingHooks { hooks -> Bool in
            guard hooks != nil, hooks?.finished == false else { return false }
            // Logging and metrics each add one: room for both in one allocation.
            if hooks?.actions.isEmpty == true { hooks?.actions.reserveCapacity(2) }
            hooks?.actions.append(action)
            return true
        }
        if !deferred { action(nil) }
    }

    /// Whether the client will decode `response` for this call: a buffered response whose status
    /// the call accepts, while decoding is expected.
    package func decodes(_ response: HTTPResponse) -> Bool {
        statusValidation != .none && statusValidation.accepts(response.statusCode) && response.body.isBuffered
            && withDecodingHooks { $0 != nil }
    }

    /// Ends the decoding step and runs the deferred actions, in the order they were deferred (the
    /// client, on every path out of a call it started with ``expectDecoding()``).
    package func finishDecoding(failure: (any Error)?) {
        let actions = withDecodingHooks { hooks -> [@Sendable ((any Error)?) -> Void] in
            guard let pending = hooks, !pending.finished else { return [] }
            hooks = DecodingHooks(actions: [], finished: true)
            return pending.actions
        }
        for action in actions { action(failure) }
    }
}

/// The actions waiting for a call's decoding; kept in the context's own state (one lock, nothing
/// allocated per call beyond the actions).
struct DecodingHooks: Sendable {
    var actions: [@Sendable ((any Error)?) -> Void] = []
    var finished = false
}
