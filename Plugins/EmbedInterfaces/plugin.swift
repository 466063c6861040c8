import Foundation
import PackagePlugin

/// Embeds the D-Bus introspection documents of `dbus/` into the target as
/// `InterfaceDocuments.documents`, so the XML is written once and the service cannot drift from it.
@main
struct EmbedInterfaces: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "dbus")
        let inputs = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "xml" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "InterfaceDocuments.swift")
        return [
            .buildCommand(
                displayName: "Embedding the D-Bus interfaces of \(target.name)",
                executable: try context.tool(named: "embed-interfaces").url,
                arguments: [output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
