%x = pd.data "x" : tensor<?x3xf32>
%y = "pd.scale"(%x) <{scale = 2 : i64}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
