// The image and compose tests each run a podman of their own, and both publish ports through the host's CNI bridge
// and port-forwarding rules. Run side by side in the suite's two workers, an SSH session through the image's
// published port once failed; one file runs them one after the other, in one worker.
import './images';
import './compose';
