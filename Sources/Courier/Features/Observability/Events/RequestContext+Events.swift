import Foundation

extension RequestContext {
    /// Sends the event `kind` to the call's monitors; with none, `kind` is never built.
    package func emit(_ kind: @autoclosure () -> NetworkEvent.Kind) {
        guard let targets = eventTargets else { return }
        let event = NetworkEvent(
            requestID: requestID, method: method, pathTemplate: targets.pathTemplate, elapsed: elapsed, kind: kind())
        for monitor in targets.monitors { monitor.receive(event) }
    }
}
