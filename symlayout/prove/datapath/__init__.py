"""The data path before the registers: global -> shared copies (cp.async, the vectorized
``[g2s]`` copy, :mod:`.g2s`), the pipeline's stages (:mod:`.stages`) and the whole path
global -> shared -> register (:mod:`.path`)."""
