import AccessoryCore
import AccessorySetupKit
import FoundationEssentials

/// `accessoryctl picker-agent`: the terminal picker as the picker agent of a logind session,
/// the text-console counterpart of `accessory-picker` (as `pkttyagent` is to polkit's
/// graphical agents).
enum PickerAgentCommand {
    static let command: Command = {
        var command = Command(
            path: ["picker-agent"],
            summary: "Be the picker of a logind session on this terminal (through the agent)",
            discussion: """
                The text-console counterpart of accessory-picker, as pkttyagent is to polkit's
                graphical agents: registers this terminal's picker with the agent as the picker
                agent of the logind session ID (--session, default $XDG_SESSION_ID), prints a
                line once registered, and then shows each picker the agent asks for on behalf of
                a client of that session, a sandboxed application included (named at the top as
                its desktop file names it): the list of 'pick', where arrow keys or an accessory's
                number choose, Enter sets up and Esc or Ctrl-C cancels. One picker at a time: a
                request that comes while one is shown is refused (PickerAlreadyActive). After each
                picker a line says how it ended. Ctrl-C while no picker is shown, or SIGTERM,
                unregisters and exits 0. If the agent refuses the registration (another picker
                agent serves the session, or it is another user's session) it exits 1 with the
                agent's reason. When the agent stops and comes back, it registers again.
                """,
            options: [.value("session", "ID", help: "The logind session to serve (default: $XDG_SESSION_ID)")],
            examples: [
                "\(AccessoryCtl.name) picker-agent                 # on a text console: serve its own session",
                "\(AccessoryCtl.name) picker-agent --session c2    # serve session c2 ('loginctl list-sessions')",
            ],
            run: run)
        command.servesUntilStopped = true
        return command
    }()

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let environment = ProcessInfo.processInfo.environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 }
        guard let session = arguments.value("session") ?? environment else {
            return RecordCommands.usage(
                "no logind session to serve: XDG_SESSION_ID is not set; give --session ID ('loginctl list-sessions')",
                console)
        }
        guard console.isTerminal && TerminalPicker.canShow else {
            console.error(
                "\(AccessoryCtl.name): error: no terminal to show pickers on: run picker-agent on the session's terminal"
            )
            return .failure
        }
        let connection: AgentConnection
        do {
            connection = try await AgentConnection.connect()
        } catch {
            return AgentCommand.report(error, console)
        }
        // Subscribed before registering, so that an agent restarting in between is not missed.
        let arrivals = await connection.agentArrivals()
        let picker: TerminalPicker
        do {
            picker = try await TerminalPicker.register(
                on: connection, logindSession: session, serving: .eachRequest { console.print("\($0)") })
        } catch {
            console.error(
                "\(AccessoryCtl.name): error: the agent refused this terminal as the picker of logind session \(session): \(error.message)"
            )
            await connection.close()
            return .failure
        }
        console.print("Registered as the picker of logind session \(session); Ctrl-C stops.")
        let again = Task {
            for await _ in arrivals {
                do throws(AgentFailure) {
                    try await picker.registerAgain()
                    console.print("The agent came back; registered again as the picker of logind session \(session).")
                } catch {
                    console.error("\(AccessoryCtl.name): cannot register again with the agent: \(error.message)")
                }
            }
        }
        // SIGINT and SIGTERM cancel this command's task (`AccessoryCtl.main`).
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        again.cancel()
        // Off the cancelled task, so that the calls are made: a picker on the screen is
        // cancelled and the terminal given back, then the agent lets go of the picker agent.
        let refusal = await Task { () -> String? in
            await picker.close()
            defer { Task { await connection.close() } }
            do throws(AgentFailure) {
                try await picker.unregister()
                return nil
            } catch {
                return error.message
            }
        }.value
        if let refusal {
            console.error("\(AccessoryCtl.name): the agent did not take the unregistration: \(refusal)")
        }
        console.print("Unregistered the picker of logind session \(session).")
        return .success
    }
}
