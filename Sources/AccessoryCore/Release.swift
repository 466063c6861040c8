/// The release these sources are: debian/changelog's version, which the package's tests hold
/// them to, so that the agent, `accessoryctl` and the package say the same.
public enum Release {
    public static let version = "0.2.0"
}
