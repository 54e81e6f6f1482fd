%x = pd.data "x" : tensor<?x3xf32>
%y = pd.scale %x {scale = "two"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
