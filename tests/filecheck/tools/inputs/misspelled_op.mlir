%x = pd.data "x" : tensor<?x3xf32>
%y = pd.rleu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
